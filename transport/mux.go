package transport

import (
	"context"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// ArmTCPMux carries all of a session's channels over one TCP connection
// (DialMux, ListenMux): writes are cut into frames of at most 16 KiB
// that name their channel, so every channel shares one congestion window
// and one in-order delivery (head-of-line blocking, which QUIC's streams
// avoid). Each channel has a window of StreamReceiveWindow unread bytes,
// as a QUIC stream has, so a reader that stops holds up only its own
// channel. The socket is set up as ArmTCP's, by the same code, and the
// QUIC options are ignored; State lists the one connection with Channel
// -1. docs/transport.md has the flow control.
const ArmTCPMux Arm = "tcp-mux"

// Limits of the tcp-mux arm.
const (
	// muxMaxPayload is the most payload one frame carries; a peer that
	// sends a longer frame is refused.
	muxMaxPayload = 16 << 10
	// muxWindow is how many bytes of a channel may be sent and not yet
	// read at the other end: what each end buffers per channel at most,
	// a QUIC stream's receive window (StreamReceiveWindow).
	// A peer that sends more is refused.
	muxWindow = StreamReceiveWindow
)

// muxCreditAfter is how many bytes a reader reads before its end returns
// them to the writer as credit.
const muxCreditAfter = muxWindow / 4

// checkMux refuses options the tcp-mux arm cannot honour.
func checkMux(o Options) error {
	if o.Channels < 1 || o.Channels > MaxChannels {
		return fmt.Errorf("tcp-mux: Options.Channels is %d: give 1 to %d", o.Channels, MaxChannels)
	}
	if o.CongestionControl != "" {
		if err := CheckCongestionControl(o.CongestionControl); err != nil {
			return fmt.Errorf("tcp-mux: %w", err)
		}
	}
	return nil
}

func handshakeTimeout(o Options) time.Duration {
	if o.HandshakeTimeout > 0 {
		return o.HandshakeTimeout
	}
	return DefaultHandshakeTimeout
}

// ListenMux listens at addr for tcp-mux sessions of o.Channels channels.
func ListenMux(ctx context.Context, addr string, o Options) (*MuxListener, error) {
	if err := checkMux(o); err != nil {
		return nil, err
	}
	hostCC, err := HostCongestionControl()
	if err != nil {
		return nil, fmt.Errorf("tcp-mux: %w", err)
	}
	listen := (&net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return controlTCP(c, o)
	}}).Listen
	if o.Listen != nil {
		listen = o.Listen
	}
	ln, err := listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tcp-mux server: listen: %w", err)
	}
	l := &MuxListener{ln: ln, opts: o, hostCC: hostCC}
	l.stop = context.AfterFunc(ctx, func() { _ = ln.Close() })
	return l, nil
}

// DialMux opens a tcp-mux session of o.Channels channels to a ListenMux
// at addr.
func DialMux(ctx context.Context, addr string, o Options) (*MuxSession, error) {
	if err := checkMux(o); err != nil {
		return nil, err
	}
	hostCC, err := HostCongestionControl()
	if err != nil {
		return nil, fmt.Errorf("tcp-mux: %w", err)
	}
	timeout := handshakeTimeout(o)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// TCP_CONGESTION is set before connect, so that the SYN runs under it
	// (with Options.DialContext, once connected).
	d := net.Dialer{ControlContext: func(_ context.Context, _, _ string, c syscall.RawConn) error {
		return controlTCP(c, o)
	}}
	dial := d.DialContext
	if o.DialContext != nil {
		dial = o.DialContext
	}
	started := time.Now()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tcp-mux client: dial: %w", err)
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("tcp-mux client: Options.DialContext returned a %T; it must return a *net.TCPConn", c)
	}
	s, err := newMuxSession(tc, "client", o, started, hostCC)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("tcp-mux client: %w", err)
	}
	deadline, _ := ctx.Deadline()
	_ = tc.SetWriteDeadline(deadline)
	if _, err := tc.Write(muxHello(o.Channels, muxModeSession)); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("tcp-mux client: writing the hello: %w", err)
	}
	_ = tc.SetWriteDeadline(time.Time{})
	s.connect = time.Since(started)
	s.start()
	return s, nil
}

// MuxListener is the server side of the tcp-mux arm (ListenMux).
type MuxListener struct {
	ln     net.Listener
	opts   Options
	hostCC string
	stop   func() bool
}

// Addr is the address the listener listens at.
func (l *MuxListener) Addr() net.Addr { return l.ln.Addr() }

// Close stops listening; sessions accepted go on.
func (l *MuxListener) Close() error {
	l.stop()
	return l.ln.Close()
}

// Accept waits for a client and its hello. A connection that sends no
// good hello within Options.HandshakeTimeout is closed and its error
// returned; the listener goes on, so Accept may be called again.
func (l *MuxListener) Accept(ctx context.Context) (*MuxSession, error) {
	if dl, ok := l.ln.(interface{ SetDeadline(time.Time) error }); ok {
		_ = dl.SetDeadline(time.Time{})
		defer onDone(ctx, func() { _ = dl.SetDeadline(time.Unix(1, 0)) })()
	} else {
		defer onDone(ctx, func() { _ = l.ln.Close() })()
	}
	c, err := l.ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tcp-mux server: accept: %w", ctx.Err())
		}
		return nil, fmt.Errorf("tcp-mux server: accept: %w", err)
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("tcp-mux server: the listener from Options.Listen gave a %T; it must give *net.TCPConn", c)
	}
	s, err := newMuxSession(tc, "server", l.opts, time.Now(), l.hostCC)
	if err == nil {
		err = readMuxHello(ctx, tc, l.opts, muxModeSession)
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("tcp-mux server (from %s): %w", c.RemoteAddr(), err)
	}
	s.start()
	return s, nil
}

// maxMuxHelloWait bounds how long a carrier listener waits for a
// carrier's hello, whatever Options.HandshakeTimeout says.
const maxMuxHelloWait = 10 * time.Second

// readMuxHello reads and checks the client's hello, for at most
// Options.HandshakeTimeout (and maxMuxHelloWait for a carrier) and until
// ctx ends.
func readMuxHello(ctx context.Context, c *net.TCPConn, o Options, mode byte) error {
	var hello [muxHelloLen]byte
	wait := handshakeTimeout(o)
	if mode == muxModeCarrier {
		wait = min(wait, maxMuxHelloWait)
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	stop := onDone(ctx, func() { _ = c.SetReadDeadline(time.Unix(1, 0)) })
	_, err := io.ReadFull(c, hello[:])
	stop()
	if err != nil {
		return fmt.Errorf("reading the hello: %w", err)
	}
	if err := checkMuxHello(hello[:], o.Channels, mode); err != nil {
		return err
	}
	return c.SetReadDeadline(time.Time{})
}

// onDone calls f when ctx ends, until the returned stop is called; stop
// returns once f, if it started, has returned.
func onDone(ctx context.Context, f func()) (stop func()) {
	ran := make(chan struct{})
	after := context.AfterFunc(ctx, func() { f(); close(ran) })
	return func() {
		if !after() {
			<-ran
		}
	}
}
