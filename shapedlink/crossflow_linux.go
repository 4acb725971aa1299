package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"
)

// tcpCross carries cross flows over kernel TCP with congestion control cc.
type tcpCross struct{ cc string }

func (t tcpCross) Receive(ctx context.Context, ns *Namespace, addr netip.AddrPort, count func(int)) (netip.AddrPort, error) {
	ln, err := ns.Listen(ctx, "tcp", addr.String())
	if err != nil {
		return netip.AddrPort{}, err
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go drainCross(ctx, c, count)
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), nil
}

// drainCross reads c until it closes or ctx ends, counting what it reads.
func drainCross(ctx context.Context, c net.Conn, count func(int)) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	buf := make([]byte, 256<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			count(n)
		}
		if err != nil {
			return
		}
	}
}

func (t tcpCross) Send(ctx context.Context, ns *Namespace, to netip.AddrPort) (CrossSender, error) {
	c, err := ns.DialContext(ctx, "tcp", to.String())
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	s := &tcpSender{c: tc, done: make(chan struct{})}
	if err := s.setCC(t.cc); err != nil {
		c.Close()
		return nil, err
	}
	s.snapshot()
	go s.run(ctx)
	return s, nil
}

// tcpSender is one TCP cross flow's sending end.
type tcpSender struct {
	c    *net.TCPConn
	done chan struct{}

	mu   sync.Mutex
	last CrossSent
	err  error
}

// setCC pins the socket's congestion control and reads it back.
func (s *tcpSender) setCC(cc string) error {
	rc, err := s.c.SyscallConn()
	if err != nil {
		return err
	}
	var got string
	var serr error
	if err := rc.Control(func(fd uintptr) {
		if serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); serr != nil {
			serr = fmt.Errorf("setting TCP_CONGESTION to %q (is the tcp_%s module available? see /proc/sys/net/ipv4/tcp_available_congestion_control): %w", cc, cc, serr)
			return
		}
		got, serr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if got != cc {
		return fmt.Errorf("asked for congestion control %q, the socket has %q", cc, got)
	}
	s.last.CC = got
	return nil
}

// snapshot reads the socket's TCP_INFO into last; on a closed socket it
// keeps what it had.
func (s *tcpSender) snapshot() {
	rc, err := s.c.SyscallConn()
	if err != nil {
		return
	}
	var ti *unix.TCPInfo
	rc.Control(func(fd uintptr) { ti, _ = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
	if ti == nil {
		return
	}
	s.mu.Lock()
	s.last.SentPackets, s.last.Retransmits = uint64(ti.Segs_out), uint64(ti.Total_retrans)
	s.mu.Unlock()
}

// run writes until the connection fails or ctx ends, then reads the
// socket's counters a last time and closes it.
func (s *tcpSender) run(ctx context.Context) {
	defer close(s.done)
	stop := context.AfterFunc(ctx, func() {
		s.snapshot()
		s.c.Close()
	})
	defer stop()
	buf := make([]byte, 64<<10)
	for {
		if _, err := s.c.Write(buf); err != nil {
			if ctx.Err() == nil {
				s.snapshot()
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				s.c.Close()
			}
			return
		}
	}
}

func (s *tcpSender) Stats() CrossSent {
	select {
	case <-s.done:
	default:
		s.snapshot()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *tcpSender) Wait() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil && !errors.Is(s.err, net.ErrClosed) {
		return s.err
	}
	return nil
}
