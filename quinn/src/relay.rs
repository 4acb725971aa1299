//! Carrying one TCP connection over one quinn stream, both ways, with a
//! half-close passed on (TCP's FIN as the stream's finish, and back).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quinn::{RecvStream, SendStream, VarInt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The stream header: a tag, then the channel's index (big-endian u16).
pub const TAG: [u8; 2] = *b"qb";

/// What one channel carried, over all its connections.
#[derive(Debug, Default)]
pub struct ChannelCounters {
    pub streams: AtomicU64,
    pub from_tcp: AtomicU64,
    pub to_tcp: AtomicU64,
}

/// The error code a stream is reset or stopped with when its TCP side
/// failed.
const FAILED: u32 = 1;

/// Relays until both directions have ended, or either failed.
pub async fn carry(tcp: TcpStream, mut send: SendStream, mut recv: RecvStream, c: Arc<ChannelCounters>) {
    let _ = tcp.set_nodelay(true);
    c.streams.fetch_add(1, Ordering::Relaxed);
    let (mut rd, mut wr) = tcp.into_split();
    let failed = {
        let up = async {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match rd.read(&mut buf).await {
                    Ok(0) => return send.finish().await.is_err(),
                    Ok(n) => {
                        if send.write_all(&buf[..n]).await.is_err() {
                            return true;
                        }
                        c.from_tcp.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(_) => return true,
                }
            }
        };
        let down = async {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match recv.read(&mut buf).await {
                    Ok(Some(n)) => {
                        if wr.write_all(&buf[..n]).await.is_err() {
                            return true;
                        }
                        c.to_tcp.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Ok(None) => return wr.shutdown().await.is_err(),
                    Err(_) => return true,
                }
            }
        };
        tokio::pin!(up, down);
        let (mut up_done, mut down_done) = (false, false);
        loop {
            let failed = tokio::select! {
                f = &mut up, if !up_done => { up_done = true; f }
                f = &mut down, if !down_done => { down_done = true; f }
            };
            if failed {
                break true;
            }
            if up_done && down_done {
                break false;
            }
        }
    };
    if failed {
        let _ = send.reset(VarInt::from_u32(FAILED));
        let _ = recv.stop(VarInt::from_u32(FAILED));
    }
}

/// The client end's side of a new stream: the header.
pub async fn open(send: &mut SendStream, index: usize) -> Result<(), String> {
    let i = index as u16;
    let header = [TAG[0], TAG[1], (i >> 8) as u8, i as u8];
    send.write_all(&header).await.map_err(|e| format!("writing the stream header: {e}"))
}

/// The server end's side: the channel index the header names.
pub async fn accept(recv: &mut RecvStream, channels: usize) -> Result<usize, String> {
    let mut h = [0u8; 4];
    recv.read_exact(&mut h).await.map_err(|e| format!("reading the stream header: {e}"))?;
    if h[..2] != TAG {
        return Err(format!("the stream header starts {:02x}{:02x}, not a quicbench-quinn client's", h[0], h[1]));
    }
    let i = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if i >= channels {
        return Err(format!("the stream names channel {i}; this end has {channels}"));
    }
    Ok(i)
}
