package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
)

// CarrierListener is the server end of carriers: it hands over each
// channel as it arrives, from any number of carriers.
type CarrierListener struct {
	arm    Arm
	opts   Options
	addr   net.Addr
	hostCC string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ready  chan acceptedChannel

	mu      sync.Mutex
	started time.Time
	count   int
	tcp     []*tcpConn
	quic    []*quicConn
	closers []func() error
	fatal   error

	closeOnce sync.Once
	closeErr  error
}

type acceptedChannel struct {
	ch  Channel
	err error
}

// ListenCarrier accepts carriers of arm on addr ("ip:port"; port 0 picks
// one, see Addr) until ctx ends or Close. For the QUIC arms
// opts.Certificate must hold the certificate and key. Options.Channels
// bounds the streams open at once on one QUIC connection (0 means
// MaxChannels).
func ListenCarrier(ctx context.Context, arm Arm, addr string, opts Options) (*CarrierListener, error) {
	o, err := carrierOptions(arm, opts)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &CarrierListener{arm: arm, opts: o, ctx: lctx, cancel: cancel, ready: make(chan acceptedChannel, 16)}
	if arm == ArmTCP {
		err = l.listenTCP(addr)
	} else {
		err = l.listenQUIC(addr)
	}
	if err != nil {
		cancel()
		_ = l.closeAll()
		return nil, err
	}
	go func() {
		<-lctx.Done()
		_ = l.Close()
	}()
	return l, nil
}

// Addr is the address the listener is bound to.
func (l *CarrierListener) Addr() net.Addr { return l.addr }

// Accept returns the next channel to arrive, with its carrier header read.
// A *ChannelError about one incoming connection or stream (a bad header, a
// failed handshake step) leaves the listener running: call Accept again.
// After Close, or once the listener's socket has failed, Accept returns an
// error wrapping net.ErrClosed.
func (l *CarrierListener) Accept(ctx context.Context) (Channel, error) {
	select {
	case a := <-l.ready:
		return a.ch, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.ctx.Done():
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.fatal != nil {
			return nil, fmt.Errorf("%w (%w)", l.fatal, net.ErrClosed)
		}
		return nil, fmt.Errorf("transport: %s carrier listener: %w", l.arm, net.ErrClosed)
	}
}

func (l *CarrierListener) deliver(ch Channel, err error) {
	select {
	case l.ready <- acceptedChannel{ch, err}:
	case <-l.ctx.Done():
		if ch != nil {
			_ = ch.Close()
		}
	}
}

func (l *CarrierListener) fail(err error) {
	l.mu.Lock()
	if l.fatal == nil {
		l.fatal = err
	}
	l.mu.Unlock()
	l.cancel()
}

// arrived counts a channel and starts the time base at the first.
func (l *CarrierListener) arrived() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		l.started = time.Now()
	}
	l.count++
}

// State reads what is in force now on every connection accepted so far,
// as Session.State does; Channels counts the channels delivered.
func (l *CarrierListener) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return carrierState(l.arm, "server", l.count, l.started, l.opts, l.hostCC, l.tcp, l.quic)
}

// Close stops accepting and closes every connection accepted, with its
// channels.
func (l *CarrierListener) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		l.closeErr = l.closeAll()
		l.wg.Wait()
		for {
			select {
			case a := <-l.ready:
				if a.ch != nil {
					_ = a.ch.Close()
				}
				continue
			default:
			}
			break
		}
	})
	return l.closeErr
}

func (l *CarrierListener) closeAll() error {
	l.mu.Lock()
	closers := l.closers
	l.closers = nil
	l.mu.Unlock()
	var errs []error
	// Connections first, then the listening socket and transport.
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// keep adds a closer, or runs it now when the listener is closing.
func (l *CarrierListener) keep(f func() error) bool {
	l.mu.Lock()
	if l.ctx.Err() == nil {
		l.closers = append(l.closers, f)
		l.mu.Unlock()
		return true
	}
	l.mu.Unlock()
	_ = f()
	return false
}

func (l *CarrierListener) listenTCP(addr string) error {
	o := l.opts
	if o.CongestionControl != "" {
		if err := CheckCongestionControl(o.CongestionControl); err != nil {
			return err
		}
	}
	var err error
	if l.hostCC, err = HostCongestionControl(); err != nil {
		return err
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error { return controlTCP(c, o) }}
	listen := lc.Listen
	if o.Listen != nil {
		listen = o.Listen
	}
	ln, err := listen(l.ctx, "tcp", addr)
	if err != nil {
		return chanErr(ArmTCP, "server", -1, "listen", err)
	}
	l.addr = ln.Addr()
	l.keep(ln.Close)
	l.wg.Go(func() {
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
			if !l.keep(c.Close) {
				return
			}
			l.wg.Go(func() { l.handleTCP(tc) })
		}
	})
	return nil
}

func (l *CarrierListener) handleTCP(c *net.TCPConn) {
	fail := func(step string, err error) {
		_ = c.Close()
		l.deliver(nil, chanErr(ArmTCP, "server", -1, fmt.Sprintf("%s (from %s)", step, c.RemoteAddr()), err))
	}
	tc, err := setupTCP(c, -1, l.opts)
	if err != nil {
		fail("socket options", err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(l.opts.HandshakeTimeout))
	stop := context.AfterFunc(l.ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	_, index, err := readCarrierHeader(c)
	stop()
	if err != nil {
		fail("header read", err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	tc.index = index
	l.mu.Lock()
	l.tcp = append(l.tcp, tc)
	l.mu.Unlock()
	l.arrived()
	l.deliver(tcpChannel{TCPConn: c, index: index}, nil)
}

func (l *CarrierListener) listenQUIC(addr string) error {
	o := l.opts
	tlsConf, err := o.Certificate.serverTLS()
	if err != nil {
		return err
	}
	ep, err := newUDPEndpoint(l.ctx, "udp", addr, o)
	if err != nil {
		return chanErr(l.arm, "server", -1, "listen", err)
	}
	l.addr = ep.pc.LocalAddr()
	tr := &quic.Transport{
		Conn: ep.pc,
		ConnContext: func(ctx context.Context, _ *quic.ClientInfo) (context.Context, error) {
			return context.WithValue(ctx, recorderKey{}, newRecorder(time.Now(), o, string(l.arm)+"_server")), nil
		},
	}
	l.keep(func() error { return errors.Join(tr.Close(), ep.pc.Close()) })
	ln, err := tr.Listen(tlsConf, quicConfig(o))
	if err != nil {
		return chanErr(l.arm, "server", -1, "listen", err)
	}
	l.keep(ln.Close)
	socket := ep.state()
	l.wg.Go(func() {
		for {
			conn, err := ln.Accept(l.ctx)
			if err != nil {
				if l.ctx.Err() == nil {
					l.fail(chanErr(l.arm, "server", -1, "accept connection", err))
				}
				return
			}
			if !l.keep(func() error { return conn.CloseWithError(0, "carrier closed") }) {
				return
			}
			l.wg.Go(func() { l.handleQUIC(conn, ep, socket) })
		}
	})
	return nil
}

// handleQUIC hands over every stream of one connection as it arrives,
// until the connection ends.
func (l *CarrierListener) handleQUIC(conn *quic.Conn, ep *udpEndpoint, socket UDPSocketState) {
	if err := checkGSO(conn, ep); err != nil {
		_ = conn.CloseWithError(1, "gso")
		l.deliver(nil, chanErr(l.arm, "server", -1, "GSO check", err))
		return
	}
	rec, _ := conn.Context().Value(recorderKey{}).(*recorder)
	qc := &quicConn{conn: conn, rec: rec, socket: socket}
	l.mu.Lock()
	l.quic = append(l.quic, qc)
	l.mu.Unlock()
	for {
		st, err := conn.AcceptStream(l.ctx)
		if err != nil {
			return // the connection or the listener ended
		}
		l.wg.Go(func() {
			ctx, cancel := context.WithTimeout(l.ctx, l.opts.HandshakeTimeout)
			defer cancel()
			if d, ok := ctx.Deadline(); ok {
				_ = st.SetReadDeadline(d)
			}
			_, index, err := readCarrierHeader(st)
			_ = st.SetReadDeadline(time.Time{})
			if err != nil {
				st.CancelRead(1)
				st.CancelWrite(1)
				l.deliver(nil, chanErr(l.arm, "server", -1, "header read", err))
				return
			}
			l.mu.Lock()
			qc.channels = append(qc.channels, index)
			l.mu.Unlock()
			l.arrived()
			l.deliver(quicChannel{Stream: st, index: index}, nil)
		})
	}
}
