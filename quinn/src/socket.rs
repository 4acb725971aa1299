//! A UDP socket for quinn that writes one datagram per packet on the wire.
//!
//! quinn 0.9 probes the kernel for UDP segmentation offload when an
//! endpoint is made and, where it is there, hands the socket batches of up
//! to 64 datagrams to be sent as one super-packet. It has no public switch
//! to turn that off, so this socket takes each batch apart and hands quinn's
//! own socket the datagrams one by one, with no segment size: every
//! datagram then leaves as a packet of its own, as it would on a host
//! without offload, while receiving, ECN and the source address stay
//! quinn's.

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use quinn_udp::{RecvMeta, UdpState};
use quinn::{AsyncUdpSocket, Transmit};

/// Whether batches are taken apart (Off) or passed to the kernel as quinn
/// made them (Kernel, for a control that must show offload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segmentation {
    Off,
    Kernel,
}

impl Segmentation {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Segmentation::Off),
            "kernel" => Ok(Segmentation::Kernel),
            _ => Err(format!(
                "--segmentation {s:?}: use off (one datagram per packet) or kernel (quinn's own batches, a control)"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Segmentation::Off => "off",
            Segmentation::Kernel => "kernel",
        }
    }
}

/// What the socket sent, for the stats file.
#[derive(Debug, Default)]
pub struct SendCounters {
    /// Transmits quinn handed over (a batch counts once).
    pub transmits: AtomicU64,
    /// Transmits that held more than one datagram.
    pub batches: AtomicU64,
    /// Datagrams handed to the kernel as packets of their own (Off), or
    /// inside batches (Kernel).
    pub datagrams: AtomicU64,
    /// The largest datagram handed to the kernel (Off), or the largest
    /// segment size (Kernel).
    pub max_datagram: AtomicU64,
    /// The batch size quinn was allowed (its probe of the kernel).
    pub quinn_gso_segments: AtomicU64,
}

/// How many datagrams of at most seg bytes len bytes make (usize::div_ceil
/// needs Rust 1.73; Debian 12's is 1.63).
#[allow(clippy::manual_div_ceil)]
fn pieces(len: usize, seg: usize) -> usize {
    (len + seg - 1) / seg
}

#[derive(Debug)]
pub struct OneDatagramSocket {
    inner: Box<dyn AsyncUdpSocket>,
    mode: Segmentation,
    counters: Arc<SendCounters>,
    /// The transmit part of which was sent when the kernel last said
    /// "later": its contents' address and length, and the datagrams of it
    /// already sent. quinn offers the same transmit again.
    partial: Option<(usize, usize, usize)>,
    scratch: Vec<Transmit>,
}

impl OneDatagramSocket {
    pub fn new(inner: Box<dyn AsyncUdpSocket>, mode: Segmentation, counters: Arc<SendCounters>) -> Self {
        OneDatagramSocket { inner, mode, counters, partial: None, scratch: Vec::new() }
    }

    fn note(&self, datagrams: usize, largest: usize) {
        self.counters.datagrams.fetch_add(datagrams as u64, Ordering::Relaxed);
        self.counters.max_datagram.fetch_max(largest as u64, Ordering::Relaxed);
    }

    fn send_kernel(&mut self, state: &UdpState, cx: &mut Context, transmits: &[Transmit]) -> Poll<io::Result<usize>> {
        let r = self.inner.poll_send(state, cx, transmits);
        if let Poll::Ready(Ok(n)) = r {
            for t in &transmits[..n] {
                let seg = t.segment_size.unwrap_or(t.contents.len()).max(1);
                let count = pieces(t.contents.len(), seg);
                self.count_transmit(count);
                self.note(count, seg.min(t.contents.len()));
            }
        }
        r
    }

    fn count_transmit(&self, datagrams: usize) {
        self.counters.transmits.fetch_add(1, Ordering::Relaxed);
        if datagrams > 1 {
            self.counters.batches.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl AsyncUdpSocket for OneDatagramSocket {
    fn poll_send(&mut self, state: &UdpState, cx: &mut Context, transmits: &[Transmit]) -> Poll<io::Result<usize>> {
        self.counters.quinn_gso_segments.store(state.max_gso_segments() as u64, Ordering::Relaxed);
        if self.mode == Segmentation::Kernel {
            return self.send_kernel(state, cx, transmits);
        }
        let mut done = 0;
        for t in transmits {
            let len = t.contents.len();
            let seg = match t.segment_size {
                Some(s) if s > 0 && s < len => s,
                _ => len.max(1),
            };
            let count = pieces(len, seg);
            let key = (t.contents.as_ptr() as usize, len);
            let mut sent = match self.partial {
                Some((p, l, n)) if (p, l) == key => n,
                _ => 0,
            };
            self.partial = None;
            while sent < count {
                self.scratch.clear();
                for i in sent..count {
                    let piece = &t.contents[i * seg..((i + 1) * seg).min(len)];
                    self.scratch.push(Transmit {
                        destination: t.destination,
                        ecn: t.ecn,
                        contents: piece.to_vec(),
                        segment_size: None,
                        src_ip: t.src_ip,
                    });
                }
                match self.inner.poll_send(state, cx, &self.scratch) {
                    Poll::Ready(Ok(n)) => {
                        let largest = self.scratch[..n].iter().map(|p| p.contents.len()).max().unwrap_or(0);
                        self.note(n, largest);
                        sent += n;
                    }
                    Poll::Ready(Err(e)) => {
                        return if done > 0 { Poll::Ready(Ok(done)) } else { Poll::Ready(Err(e)) };
                    }
                    Poll::Pending => {
                        if sent > 0 {
                            self.partial = Some((key.0, key.1, sent));
                        }
                        return if done > 0 { Poll::Ready(Ok(done)) } else { Poll::Pending };
                    }
                }
            }
            self.count_transmit(count);
            done += 1;
        }
        Poll::Ready(Ok(done))
    }

    fn poll_recv(&self, cx: &mut Context, bufs: &mut [IoSliceMut<'_>], meta: &mut [RecvMeta]) -> Poll<io::Result<usize>> {
        self.inner.poll_recv(cx, bufs, meta)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}
