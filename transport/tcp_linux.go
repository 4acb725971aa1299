package transport

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/transport/quicreno"
	"golang.org/x/sys/unix"
)

const (
	procAvailableCC = "/proc/sys/net/ipv4/tcp_available_congestion_control"
	procAllowedCC   = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
	procDefaultCC   = "/proc/sys/net/ipv4/tcp_congestion_control"
)

func readProcWords(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// AvailableCongestionControl returns the TCP congestion control algorithms
// this host's kernel has loaded (tcp_available_congestion_control).
func AvailableCongestionControl() ([]string, error) {
	w, err := readProcWords(procAvailableCC)
	if err != nil {
		return nil, fmt.Errorf("transport: reading the available TCP congestion controls: %w", err)
	}
	return w, nil
}

// HostCongestionControl returns the default TCP congestion control of the
// calling thread's network namespace (tcp_congestion_control).
func HostCongestionControl() (string, error) {
	w, err := readProcWords(procDefaultCC)
	if err != nil || len(w) != 1 {
		return "", fmt.Errorf("transport: reading the default TCP congestion control from %s: %v", procDefaultCC, err)
	}
	return w[0], nil
}

// CheckCongestionControl returns nil if name can be set with TCP_CONGESTION
// here, and otherwise an error saying what is available and what to do.
func CheckCongestionControl(name string) error {
	avail, err := AvailableCongestionControl()
	if err != nil {
		return err
	}
	if slices.Contains(avail, name) {
		return nil
	}
	if name == quicreno.Name {
		return fmt.Errorf("transport: TCP congestion control %q is not registered (tcp_available_congestion_control: %s): "+
			"it is a BPF controller that is there only while a program holds it; load it with quicreno.Load "+
			"(root in the initial user namespace), as the matrix commands do when -ccs names it", name, strings.Join(avail, " "))
	}
	return fmt.Errorf("transport: TCP congestion control %q is not available on this host (tcp_available_congestion_control: %s); "+
		"load it as root with `modprobe tcp_%s` (an unprivileged namespace cannot), or choose one of those available",
		name, strings.Join(avail, " "), name)
}

// setTCPOptions sets TCP_NODELAY, and TCP_CONGESTION and TCP_NOTSENT_LOWAT
// when asked, on one socket.
func setTCPOptions(fd int, o Options) error {
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("setting TCP_NODELAY: %w", err)
	}
	if o.CongestionControl != "" {
		if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, o.CongestionControl); err != nil {
			if errors.Is(err, unix.EPERM) {
				allowed, _ := readProcWords(procAllowedCC)
				return fmt.Errorf("setting TCP_CONGESTION %q: %w: without CAP_NET_ADMIN only tcp_allowed_congestion_control (%s) may be set",
					o.CongestionControl, err, strings.Join(allowed, " "))
			}
			return fmt.Errorf("setting TCP_CONGESTION %q: %w", o.CongestionControl, err)
		}
	}
	if o.NotSentLowat > 0 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, o.NotSentLowat); err != nil {
			return fmt.Errorf("setting TCP_NOTSENT_LOWAT %d: %w", o.NotSentLowat, err)
		}
	}
	return nil
}

func controlTCP(rc syscall.RawConn, o Options) error {
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setTCPOptions(int(fd), o) }); err != nil {
		return err
	}
	return serr
}

func readTCPOptions(rc syscall.RawConn) (TCPSocketOptions, error) {
	var o TCPSocketOptions
	var serr error
	if err := rc.Control(func(fd uintptr) {
		o.CongestionControl, serr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		if serr != nil {
			serr = fmt.Errorf("reading TCP_CONGESTION: %w", serr)
			return
		}
		var v int
		v, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY)
		if serr != nil {
			serr = fmt.Errorf("reading TCP_NODELAY: %w", serr)
			return
		}
		o.NoDelay = v != 0
		v, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
		if serr != nil {
			serr = fmt.Errorf("reading TCP_NOTSENT_LOWAT: %w", serr)
			return
		}
		o.NotSentLowat = uint32(v)
	}); err != nil {
		return o, err
	}
	return o, serr
}

func readTCPInfo(rc syscall.RawConn, at time.Duration) (TCPInfo, error) {
	var out TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var ti *unix.TCPInfo
		ti, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if serr != nil {
			serr = fmt.Errorf("reading TCP_INFO: %w", serr)
			return
		}
		out = TCPInfo{
			At:            at,
			State:         ti.State,
			CAState:       ti.Ca_state,
			CwndSegments:  ti.Snd_cwnd,
			SsthreshSegs:  ti.Snd_ssthresh,
			MSS:           ti.Snd_mss,
			SRTT:          time.Duration(ti.Rtt) * time.Microsecond,
			RTTVar:        time.Duration(ti.Rttvar) * time.Microsecond,
			MinRTT:        time.Duration(ti.Min_rtt) * time.Microsecond,
			Retransmits:   ti.Total_retrans,
			Lost:          ti.Lost,
			Unacked:       ti.Unacked,
			DeliveryRate:  ti.Delivery_rate,
			PacingRate:    ti.Pacing_rate,
			BytesAcked:    ti.Bytes_acked,
			BytesSent:     ti.Bytes_sent,
			BytesRetrans:  ti.Bytes_retrans,
			BytesReceived: ti.Bytes_received,
			NotSentBytes:  ti.Notsent_bytes,
			SegsOut:       ti.Segs_out,
			SegsIn:        ti.Segs_in,
			SndWnd:        ti.Snd_wnd,
			RcvWnd:        ti.Rcv_wnd,
			RcvSpace:      ti.Rcv_space,
		}
		out.Algorithm, serr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		if serr != nil {
			serr = fmt.Errorf("reading TCP_CONGESTION: %w", serr)
		}
	}); err != nil {
		return out, err
	}
	return out, serr
}
