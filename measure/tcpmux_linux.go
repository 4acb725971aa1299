package measure

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/transport"
	"golang.org/x/sys/unix"
)

func init() { muxSockets = linuxMuxSockets{} }

// linuxMuxSockets sets and reads a tcp-mux socket with setsockopt and
// getsockopt.
type linuxMuxSockets struct{}

// set sets TCP_NODELAY, and TCP_CONGESTION and TCP_NOTSENT_LOWAT when o
// asks for them.
func (linuxMuxSockets) set(raw syscall.RawConn, o transport.Options) error {
	var err error
	cerr := raw.Control(func(fd uintptr) {
		if err = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			err = fmt.Errorf("setting TCP_NODELAY: %w", err)
			return
		}
		if cc := o.CongestionControl; cc != "" {
			if err = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
				if errors.Is(err, unix.EPERM) {
					err = fmt.Errorf("setting TCP_CONGESTION %q: %w: without CAP_NET_ADMIN only the controls in "+
						"/proc/sys/net/ipv4/tcp_allowed_congestion_control may be set", cc, err)
				} else {
					err = fmt.Errorf("setting TCP_CONGESTION %q: %w", cc, err)
				}
				return
			}
		}
		if o.NotSentLowat > 0 {
			if err = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, o.NotSentLowat); err != nil {
				err = fmt.Errorf("setting TCP_NOTSENT_LOWAT %d: %w", o.NotSentLowat, err)
			}
		}
	})
	return errors.Join(cerr, err)
}

// options reads back what set sets.
func (linuxMuxSockets) options(raw syscall.RawConn) (transport.TCPSocketOptions, error) {
	var o transport.TCPSocketOptions
	var err error
	cerr := raw.Control(func(fd uintptr) {
		if o.CongestionControl, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION); err != nil {
			err = fmt.Errorf("reading TCP_CONGESTION: %w", err)
			return
		}
		var v int
		if v, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY); err != nil {
			err = fmt.Errorf("reading TCP_NODELAY: %w", err)
			return
		}
		o.NoDelay = v != 0
		if v, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT); err != nil {
			err = fmt.Errorf("reading TCP_NOTSENT_LOWAT: %w", err)
			return
		}
		o.NotSentLowat = uint32(v)
	})
	return o, errors.Join(cerr, err)
}

// info reads TCP_INFO, stamped at.
func (linuxMuxSockets) info(raw syscall.RawConn, at time.Duration) (transport.TCPInfo, error) {
	var out transport.TCPInfo
	var err error
	cerr := raw.Control(func(fd uintptr) {
		var ti *unix.TCPInfo
		if ti, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err != nil {
			err = fmt.Errorf("reading TCP_INFO: %w", err)
			return
		}
		us := func(v uint32) time.Duration { return time.Duration(v) * time.Microsecond }
		out = transport.TCPInfo{
			At: at, State: ti.State, CAState: ti.Ca_state,
			CwndSegments: ti.Snd_cwnd, SsthreshSegs: ti.Snd_ssthresh, MSS: ti.Snd_mss,
			SRTT: us(ti.Rtt), RTTVar: us(ti.Rttvar), MinRTT: us(ti.Min_rtt),
			Retransmits: ti.Total_retrans, Lost: ti.Lost, Unacked: ti.Unacked,
			DeliveryRate: ti.Delivery_rate, PacingRate: ti.Pacing_rate,
			BytesAcked: ti.Bytes_acked, BytesSent: ti.Bytes_sent, BytesRetrans: ti.Bytes_retrans, BytesReceived: ti.Bytes_received,
			NotSentBytes: ti.Notsent_bytes, SegsOut: ti.Segs_out, SegsIn: ti.Segs_in,
			SndWnd: ti.Snd_wnd, RcvWnd: ti.Rcv_wnd, RcvSpace: ti.Rcv_space,
		}
		if out.Algorithm, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION); err != nil {
			err = fmt.Errorf("reading TCP_CONGESTION: %w", err)
		}
	})
	return out, errors.Join(cerr, err)
}
