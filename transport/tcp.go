package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// tcpConn is one tcp-arm connection and what was read back from it.
type tcpConn struct {
	conn  *net.TCPConn
	raw   syscall.RawConn
	index int
	opts  TCPSocketOptions

	mu            sync.Mutex
	series        []TCPInfo
	seriesDropped int
	last          *TCPInfo // read just before the socket closed
}

// tcpChannel is a TCP connection as a Channel.
type tcpChannel struct {
	*net.TCPConn
	index int
}

func (c tcpChannel) Index() int { return c.index }

// keepLast reads the connection's TCP_INFO at at, for state to report
// once the socket has closed; call it before closing.
func (c *tcpConn) keepLast(at time.Duration) {
	info, err := readTCPInfo(c.raw, at)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.last = &info
	c.mu.Unlock()
}

func (c *tcpConn) state(at time.Duration) TCPConnState {
	cs := TCPConnState{
		Channel:    c.index,
		LocalAddr:  c.conn.LocalAddr().String(),
		RemoteAddr: c.conn.RemoteAddr().String(),
		Options:    c.opts,
	}
	info, err := readTCPInfo(c.raw, at)
	c.mu.Lock()
	switch {
	case err == nil:
		cs.Info = info
	case c.last != nil:
		cs.Info = *c.last
	default:
		cs.InfoError = err.Error()
	}
	cs.Series = append([]TCPInfo(nil), c.series...)
	cs.SeriesDropped = c.seriesDropped
	c.mu.Unlock()
	return cs
}

// setupTCP applies the options to an established connection and reads them
// back; it refuses a connection whose congestion control is not the one
// requested.
func setupTCP(conn *net.TCPConn, index int, o Options) (*tcpConn, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := controlTCP(raw, o); err != nil {
		return nil, err
	}
	got, err := readTCPOptions(raw)
	if err != nil {
		return nil, err
	}
	if o.CongestionControl != "" && got.CongestionControl != o.CongestionControl {
		return nil, fmt.Errorf("TCP_CONGESTION reads back %q after setting %q", got.CongestionControl, o.CongestionControl)
	}
	if !got.NoDelay {
		return nil, fmt.Errorf("TCP_NODELAY reads back off after setting it")
	}
	return &tcpConn{conn: conn, raw: raw, index: index, opts: got}, nil
}

func tcpControl(o Options) func(ctx context.Context, network, address string, c syscall.RawConn) error {
	return func(_ context.Context, _, _ string, c syscall.RawConn) error {
		return controlTCP(c, o)
	}
}

func (l *Listener) listenTCP(addr string) error {
	o := l.opts
	if o.CongestionControl != "" {
		if err := CheckCongestionControl(o.CongestionControl); err != nil {
			return err
		}
	}
	hostCC, err := HostCongestionControl()
	if err != nil {
		return err
	}
	// Options set on the listening socket are inherited by accepted ones;
	// they are set again on each accepted socket and read back anyway.
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		return controlTCP(c, o)
	}}
	listen := lc.Listen
	if o.Listen != nil {
		listen = o.Listen
	}
	ln, err := listen(l.ctx, "tcp", addr)
	if err != nil {
		return chanErr(ArmTCP, "server", -1, "listen", err)
	}
	l.addr = ln.Addr()
	l.closers = append(l.closers, ln.Close)
	var g grouper[*tcpConn]
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if l.ctx.Err() == nil {
					l.fail(chanErr(ArmTCP, "server", -1, "accept", err))
				}
				return
			}
			tc, ok := c.(*net.TCPConn)
			if !ok {
				_ = c.Close()
				l.fail(chanErr(ArmTCP, "server", -1, "accept", fmt.Errorf("the listener from Options.Listen gave a %T; it must give *net.TCPConn", c)))
				return
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.handleTCP(tc, &g, hostCC)
			}()
		}
	}()
	return nil
}

func (l *Listener) handleTCP(c *net.TCPConn, g *grouper[*tcpConn], hostCC string) {
	o := l.opts
	fail := func(ch int, step string, err error) {
		_ = c.Close()
		l.deliver(nil, chanErr(ArmTCP, "server", ch, fmt.Sprintf("%s (from %s)", step, c.RemoteAddr()), err))
	}
	// Options first, so that nothing the server sends uses other settings.
	tc, err := setupTCP(c, -1, o)
	if err != nil {
		fail(-1, "socket options", err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(o.HandshakeTimeout))
	// Closing the listener must not wait for a silent client's timeout.
	stop := context.AfterFunc(l.ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	h, err := readHeader(c)
	stop()
	if err != nil {
		fail(-1, "header read", err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if h.count != o.Channels {
		fail(h.index, "header check", fmt.Errorf("client opens %d channels but the server expects %d: set the same Options.Channels on both ends",
			h.count, o.Channels))
		return
	}
	tc.index = h.index
	conns, started, err := g.add(h, tc, o.HandshakeTimeout, func(have []*tcpConn, missing []int) {
		for _, t := range have {
			_ = t.conn.Close()
		}
		l.deliver(nil, chanErr(ArmTCP, "server", missing[0], "waiting for the session's channels",
			fmt.Errorf("channels %v of session %016x did not arrive within %v", missing, uint64(h.session), o.HandshakeTimeout)))
	})
	if err != nil {
		fail(h.index, "grouping", err)
		return
	}
	if conns == nil {
		return
	}
	s := newTCPSession("server", o, started, conns)
	s.hostCC = hostCC
	l.deliver(s, nil)
}

func newTCPSession(role string, o Options, started time.Time, conns []*tcpConn) *Session {
	s := &Session{arm: ArmTCP, role: role, opts: o, started: started, tcp: conns}
	for _, c := range conns {
		s.channels = append(s.channels, tcpChannel{TCPConn: c.conn, index: c.index})
	}
	if o.TCPInfoInterval > 0 {
		// The first sample is taken before the caller can write, so that
		// the series starts with the window before any data (the initial
		// window), however late the sampling goroutine first runs.
		s.sampleTCPOnce()
		ctx, cancel := context.WithCancel(context.Background())
		s.stopSampling = cancel
		s.samplingDone = make(chan struct{})
		go s.sampleTCP(ctx)
	}
	return s
}

func (s *Session) sampleTCP(ctx context.Context) {
	defer close(s.samplingDone)
	t := time.NewTicker(s.opts.TCPInfoInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sampleTCPOnce()
	}
}

// sampleTCPOnce appends one TCP_INFO sample to each connection's series.
func (s *Session) sampleTCPOnce() {
	at := time.Since(s.started)
	for _, c := range s.tcp {
		info, err := readTCPInfo(c.raw, at)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if len(c.series) < s.opts.MaxSamples {
			c.series = append(c.series, info)
		} else {
			c.seriesDropped++
		}
		c.mu.Unlock()
	}
}

func dialTCP(ctx context.Context, addr string, o Options) (*Session, error) {
	if o.CongestionControl != "" {
		if err := CheckCongestionControl(o.CongestionControl); err != nil {
			return nil, err
		}
	}
	hostCC, err := HostCongestionControl()
	if err != nil {
		return nil, err
	}
	sid, err := newSessionID()
	if err != nil {
		return nil, err
	}
	// TCP_CONGESTION is set before connect so the SYN already runs under it
	// (with Options.DialContext, once connected: see there).
	d := net.Dialer{Timeout: o.HandshakeTimeout, ControlContext: tcpControl(o)}
	dial := d.DialContext
	if o.DialContext != nil {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
			defer cancel()
			return o.DialContext(ctx, network, address)
		}
	}
	started := time.Now()
	conns := make([]*tcpConn, o.Channels)
	errs := make([]error, o.Channels)
	var wg sync.WaitGroup
	for i := range o.Channels {
		wg.Go(func() { conns[i], errs[i] = dialOneTCP(ctx, dial, addr, i, sid, o) })
	}
	wg.Wait()
	connect := time.Since(started)
	if err := errors.Join(errs...); err != nil {
		for _, c := range conns {
			if c != nil {
				_ = c.conn.Close()
			}
		}
		return nil, err
	}
	s := newTCPSession("client", o, started, conns)
	s.connectTime = connect
	s.hostCC = hostCC
	return s, nil
}

func dialOneTCP(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error),
	addr string, i int, sid sessionID, o Options) (*tcpConn, error) {
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, chanErr(ArmTCP, "client", i, "dial", err)
	}
	raw, ok := c.(*net.TCPConn)
	if !ok {
		_ = c.Close()
		return nil, chanErr(ArmTCP, "client", i, "dial", fmt.Errorf("Options.DialContext returned a %T; it must return a *net.TCPConn", c))
	}
	tc, err := setupTCP(raw, i, o)
	if err != nil {
		_ = c.Close()
		return nil, chanErr(ArmTCP, "client", i, "socket options", err)
	}
	deadline := time.Now().Add(o.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetWriteDeadline(deadline)
	if _, err := c.Write(channelHeader{session: sid, index: i, count: o.Channels}.marshal()); err != nil {
		_ = c.Close()
		return nil, chanErr(ArmTCP, "client", i, "header write", err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	return tc, nil
}
