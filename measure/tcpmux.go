package measure

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// TCPMux carries all of a session's channels over one TCP connection: each
// write is cut into frames of at most MuxMaxPayload bytes that name their
// channel, and the other end sorts the frames back into channels. Every
// channel shares the connection's congestion window, its send buffer and
// its in-order delivery, so a segment lost from one channel's bytes holds
// up every channel's bytes behind it (head-of-line blocking), which QUIC's
// independent streams avoid.
//
// Each channel has a window, as a QUIC stream has: a writer sends at most
// MuxWindow bytes that the peer's reader has not yet read, and waits for
// the peer to return credit as its reader reads. So a reader that stops
// holds up only its own channel's writer, and neither end ever stops
// reading the connection. A frame, once begun, is written whole before
// any other; a write deadline that passes during it ends the Write, and
// the rest of the frame goes out ahead of the next one.
//
// The socket is set up as the tcp arm's are: TCP_NODELAY,
// Options.CongestionControl pinned with TCP_CONGESTION (or the host
// default, recorded), Options.NotSentLowat, Options.TCPInfoInterval
// sampling, and the hooks Options.Listen and DialContext. The QUIC
// options are ignored, as the tcp arm ignores them. State lists the one
// connection in State.TCP, with Channel -1 (it carries every channel).
var TCPMux Arm = tcpMux{}

// Limits of the tcp-mux arm.
const (
	// MuxMaxPayload is the most payload one frame carries; a peer that
	// sends a longer frame is refused.
	MuxMaxPayload = 16 << 10
	// MuxWindow is how many bytes of a channel may be sent and not yet
	// read at the other end: what each end buffers per channel at most,
	// a QUIC stream's receive window (transport.StreamReceiveWindow).
	// A peer that sends more is refused.
	MuxWindow = transport.StreamReceiveWindow
)

// muxCreditAfter is how many bytes a reader reads before its end returns
// them to the writer as credit.
const muxCreditAfter = MuxWindow / 4

func init() {
	if err := Register(TCPMux); err != nil {
		panic(err)
	}
}

// The wire: the client writes muxHello once, then both ends write frames,
// a 4-byte header and its payload:
//
//	[0]   kind: muxData (payload is channel data), muxFin (no payload: the
//	      sender writes nothing more on the channel), muxCredit (payload
//	      is a big-endian uint32: the receiver has read that many more
//	      bytes of the channel, so the sender may send them) or, in a
//	      carrier, muxOpen (no payload: the client opens the channel,
//	      before any other frame of it)
//	[1]   channel index
//	[2:4] payload length, big-endian: 1..MuxMaxPayload for data, 0 for
//	      fin, 4 for credit
const (
	muxHeaderLen = 4
	muxData      = 'D'
	muxFin       = 'F'
	muxCredit    = 'C'
	muxOpen      = 'O'
	muxVersion   = 1
)

// The hello's mode: a session's channels all exist from the start; a
// carrier's are opened one at a time with muxOpen.
const (
	muxModeSession = 0
	muxModeCarrier = 1
)

// muxHello is the client's first bytes: magic, version, channel count,
// mode and a zero byte.
var muxMagic = [4]byte{'Q', 'B', 'M', 'X'}

const muxHelloLen = 8

type muxFrame struct {
	kind    byte
	channel int
	length  int
}

func putMuxHeader(b []byte, f muxFrame) {
	b[0], b[1] = f.kind, byte(f.channel)
	binary.BigEndian.PutUint16(b[2:4], uint16(f.length))
}

// parseMuxHeader decodes and checks a frame header of a session of
// channels channels.
func parseMuxHeader(h []byte, channels int) (muxFrame, error) {
	f := muxFrame{kind: h[0], channel: int(h[1]), length: int(binary.BigEndian.Uint16(h[2:4]))}
	switch {
	case f.kind != muxData && f.kind != muxFin && f.kind != muxCredit && f.kind != muxOpen:
		return f, fmt.Errorf("frame header % x has kind %#02x, not data, fin, credit or open: is the peer a tcp-mux end of this version?", h[:muxHeaderLen], f.kind)
	case f.channel >= channels:
		return f, fmt.Errorf("frame for channel %d of a %d-channel session", f.channel, channels)
	case (f.kind == muxFin || f.kind == muxOpen) && f.length != 0:
		return f, fmt.Errorf("%s frame for channel %d carries %d bytes; it carries none", muxKindName(f.kind), f.channel, f.length)
	case f.kind == muxCredit && f.length != 4:
		return f, fmt.Errorf("credit frame for channel %d carries %d bytes; it carries 4", f.channel, f.length)
	case f.kind == muxData && (f.length == 0 || f.length > MuxMaxPayload):
		return f, fmt.Errorf("data frame for channel %d of %d bytes; frames carry 1 to %d", f.channel, f.length, MuxMaxPayload)
	}
	return f, nil
}

// readMuxFrame reads one frame from r into buf (at least MuxMaxPayload
// bytes) and returns it with its payload. io.EOF means r ended cleanly
// between frames.
func readMuxFrame(r io.Reader, channels int, buf []byte) (muxFrame, []byte, error) {
	var h [muxHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("the connection ended inside a frame header: %w", err)
		}
		return muxFrame{}, nil, err
	}
	f, err := parseMuxHeader(h[:], channels)
	if err != nil {
		return f, nil, err
	}
	p := buf[:f.length]
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return f, nil, fmt.Errorf("reading the %d bytes of a frame for channel %d: %w", f.length, f.channel, err)
	}
	return f, p, nil
}

func muxKindName(k byte) string {
	if k == muxOpen {
		return "open"
	}
	return "fin"
}

func muxHello(channels int, mode byte) []byte {
	b := make([]byte, muxHelloLen)
	copy(b, muxMagic[:])
	b[4], b[5], b[6] = muxVersion, byte(channels), mode
	return b
}

func checkMuxHello(b []byte, channels int, mode byte) error {
	switch {
	case [4]byte(b[:4]) != muxMagic:
		return fmt.Errorf("the client's first bytes % x are not a tcp-mux hello (%q): is the client dialling another arm?", b, muxMagic[:])
	case b[4] != muxVersion:
		return fmt.Errorf("the client speaks tcp-mux version %d, this server %d: run the same build at both ends", b[4], muxVersion)
	case b[6] != mode && mode == muxModeSession:
		return errors.New("the client opens a tcp-mux carrier, and this server serves sessions: listen with measure.ListenMuxCarrier")
	case b[6] != mode:
		return errors.New("the client opens a tcp-mux session, and this server serves carriers: dial with measure.DialMuxCarrier")
	case int(b[5]) != channels:
		return fmt.Errorf("the client has %d channels and this server %d: give both ends the same Options.Channels", b[5], channels)
	}
	return nil
}

// muxSocketOps sets and reads a tcp-mux socket's options; tcpmux_linux.go
// provides them, and elsewhere the arm fails.
type muxSocketOps interface {
	set(raw syscall.RawConn, o transport.Options) error
	options(raw syscall.RawConn) (transport.TCPSocketOptions, error)
	info(raw syscall.RawConn, at time.Duration) (transport.TCPInfo, error)
}

var muxSockets muxSocketOps

type tcpMux struct{}

func (tcpMux) Name() string { return "tcp-mux" }

// check refuses options the arm cannot honour.
func (tcpMux) check(o transport.Options) error {
	if muxSockets == nil {
		return errors.New("tcp-mux: only Linux is supported")
	}
	if o.Channels < 1 || o.Channels > transport.MaxChannels {
		return fmt.Errorf("tcp-mux: Options.Channels is %d: give 1 to %d", o.Channels, transport.MaxChannels)
	}
	if o.CongestionControl != "" {
		if err := transport.CheckCongestionControl(o.CongestionControl); err != nil {
			return fmt.Errorf("tcp-mux: %w", err)
		}
	}
	return nil
}

func handshakeTimeout(o transport.Options) time.Duration {
	if o.HandshakeTimeout > 0 {
		return o.HandshakeTimeout
	}
	return transport.DefaultHandshakeTimeout
}

func (m tcpMux) Listen(ctx context.Context, addr string, o transport.Options) (Listener, error) {
	if err := m.check(o); err != nil {
		return nil, err
	}
	hostCC, err := transport.HostCongestionControl()
	if err != nil {
		return nil, fmt.Errorf("tcp-mux: %w", err)
	}
	listen := (&net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return muxSockets.set(c, o)
	}}).Listen
	if o.Listen != nil {
		listen = o.Listen
	}
	ln, err := listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tcp-mux server: listen: %w", err)
	}
	l := &muxListener{ln: ln, opts: o, hostCC: hostCC}
	l.stop = context.AfterFunc(ctx, func() { _ = ln.Close() })
	return l, nil
}

func (m tcpMux) Dial(ctx context.Context, addr string, o transport.Options) (Session, error) {
	if err := m.check(o); err != nil {
		return nil, err
	}
	hostCC, err := transport.HostCongestionControl()
	if err != nil {
		return nil, fmt.Errorf("tcp-mux: %w", err)
	}
	timeout := handshakeTimeout(o)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// TCP_CONGESTION is set before connect, so that the SYN runs under it
	// (with Options.DialContext, once connected).
	d := net.Dialer{ControlContext: func(_ context.Context, _, _ string, c syscall.RawConn) error {
		return muxSockets.set(c, o)
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

type muxListener struct {
	ln     net.Listener
	opts   transport.Options
	hostCC string
	stop   func() bool
}

func (l *muxListener) Addr() net.Addr { return l.ln.Addr() }

func (l *muxListener) Close() error {
	l.stop()
	return l.ln.Close()
}

// Accept waits for a client and its hello. A connection that sends no
// good hello within Options.HandshakeTimeout is closed and its error
// returned; the listener goes on, so Accept may be called again.
func (l *muxListener) Accept(ctx context.Context) (Session, error) {
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

// readMuxHello reads and checks the client's hello, for at most
// Options.HandshakeTimeout and until ctx ends.
func readMuxHello(ctx context.Context, c *net.TCPConn, o transport.Options, mode byte) error {
	var hello [muxHelloLen]byte
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout(o)))
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

var errMuxSessionClosed = fmt.Errorf("tcp-mux: the session is closed: %w", net.ErrClosed)

// muxSession is one end of a tcp-mux connection.
type muxSession struct {
	conn     *net.TCPConn
	raw      syscall.RawConn
	role     string
	opts     transport.Options
	started  time.Time
	connect  time.Duration
	hostCC   string
	sockopts transport.TCPSocketOptions
	chans    []*muxChannel

	// wtok is the right to write frames to conn: whoever has taken its
	// one token writes, then puts it back.
	wtok chan struct{}
	wmu  sync.Mutex // guards writer and pending
	// writer is the channel whose frame is being written, so that a change
	// of its write deadline reaches conn.
	writer *muxChannel
	// pending is the rest of a frame a deadline cut short: it is written
	// before any other frame.
	pending []byte
	// credit is a token when some channel has credit to return.
	credit chan struct{}

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	failed    chan struct{} // closed when the connection has failed
	failOnce  sync.Once
	failErr   error
	done      sync.WaitGroup // the demultiplexer, the credit writer and the sampler
	demuxed   chan struct{}  // closed when the demultiplexer has ended

	// closeConn closes the connection: conn.Close, unless the connection
	// came from a carrier listener, whose channel's Close releases it.
	closeConn func() error
	// onOpen, set in a carrier's server end, hands over a channel the
	// client opened; nil refuses open frames.
	onOpen func(*muxChannel) error

	infoMu        sync.Mutex
	series        []transport.TCPInfo
	seriesDropped int
	// last is TCP_INFO read just before the session closed the
	// connection, for State after that.
	last    transport.TCPInfo
	lastErr error
	lastSet bool
}

func newMuxSession(c *net.TCPConn, role string, o transport.Options, started time.Time, hostCC string) (*muxSession, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := muxSockets.set(raw, o); err != nil {
		return nil, fmt.Errorf("socket options: %w", err)
	}
	got, err := muxSockets.options(raw)
	if err != nil {
		return nil, fmt.Errorf("socket options: %w", err)
	}
	if o.CongestionControl != "" && got.CongestionControl != o.CongestionControl {
		return nil, fmt.Errorf("socket options: TCP_CONGESTION reads back %q after setting %q", got.CongestionControl, o.CongestionControl)
	}
	s := &muxSession{
		conn: c, raw: raw, role: role, opts: o, started: started, hostCC: hostCC, sockopts: got,
		wtok: make(chan struct{}, 1), credit: make(chan struct{}, 1),
		closed: make(chan struct{}), failed: make(chan struct{}), demuxed: make(chan struct{}), closeConn: c.Close,
	}
	s.wtok <- struct{}{}
	for i := range o.Channels {
		s.chans = append(s.chans, newMuxChannel(s, i))
	}
	return s, nil
}

// start runs the demultiplexer, the credit writer, and the TCP_INFO
// sampler when asked for.
func (s *muxSession) start() {
	s.done.Go(s.demux)
	s.done.Go(s.returnCredit)
	if s.opts.TCPInfoInterval > 0 {
		s.done.Go(s.sample)
	}
}

func (s *muxSession) Channels() []io.ReadWriteCloser {
	out := make([]io.ReadWriteCloser, len(s.chans))
	for i, c := range s.chans {
		out[i] = c
	}
	return out
}

// Close closes every channel and the connection.
func (s *muxSession) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		for _, c := range s.chans {
			c.shut()
		}
		s.keepLastInfo()
		err = s.closeConn()
		s.done.Wait()
	})
	return err
}

// fail records why the connection can no longer be used and closes it.
func (s *muxSession) fail(err error) {
	s.failOnce.Do(func() {
		s.failErr = fmt.Errorf("tcp-mux %s: %w", s.role, err)
		close(s.failed)
		s.keepLastInfo()
		_ = s.closeConn()
	})
}

// keepLastInfo reads TCP_INFO once more before the session closes the
// connection, so that State still has it afterwards.
func (s *muxSession) keepLastInfo() {
	info, err := muxSockets.info(s.raw, time.Since(s.started))
	s.infoMu.Lock()
	if !s.lastSet {
		s.last, s.lastErr, s.lastSet = info, err, true
	}
	s.infoMu.Unlock()
}

// demux reads frames and hands each channel its bytes until the
// connection ends. It never waits for a reader: the window bounds what a
// channel holds.
func (s *muxSession) demux() {
	defer close(s.demuxed)
	r := bufio.NewReaderSize(s.conn, 64<<10)
	var err error
	for err == nil {
		var f muxFrame
		var p []byte
		buf := getMuxBuf()
		if f, p, err = readMuxFrame(r, len(s.chans), *buf); err != nil {
			putMuxBuf(buf)
			break
		}
		c := s.chans[f.channel]
		switch f.kind {
		case muxData:
			err = c.deliver(buf, len(p))
		case muxFin:
			putMuxBuf(buf)
			err = c.finish()
		case muxCredit:
			n := binary.BigEndian.Uint32(p)
			putMuxBuf(buf)
			err = c.addCredit(int64(n))
		case muxOpen:
			putMuxBuf(buf)
			err = errors.New("an open frame in a session, whose channels need none: is the peer a tcp-mux carrier?")
			if s.onOpen != nil {
				err = s.onOpen(c)
			}
		}
	}
	select {
	case <-s.closed:
		err = errMuxSessionClosed
	default:
		if err == io.EOF {
			// The peer closed the connection between frames: every
			// channel has ended, as if each had had its fin.
			err = nil
		} else {
			s.fail(fmt.Errorf("reading the connection: %w", err))
			err = s.failErr
		}
	}
	for _, c := range s.chans {
		c.end(err)
	}
}

// returnCredit writes credit frames for what readers have read, until
// the session ends.
func (s *muxSession) returnCredit() {
	frames := make([]byte, 0, len(s.chans)*(muxHeaderLen+4))
	for {
		select {
		case <-s.credit:
		case <-s.closed:
			return
		case <-s.failed:
			return
		}
		select {
		case <-s.wtok:
		case <-s.closed:
			return
		case <-s.failed:
			return
		}
		frames = frames[:0]
		for _, c := range s.chans {
			if n := c.takeCredit(); n > 0 {
				h := make([]byte, muxHeaderLen+4)
				putMuxHeader(h, muxFrame{kind: muxCredit, channel: c.index, length: 4})
				binary.BigEndian.PutUint32(h[muxHeaderLen:], uint32(n))
				frames = append(frames, h...)
			}
		}
		err := s.flushPending(nil)
		if err == nil && len(frames) > 0 {
			_, err = s.writeConn(nil, frames)
		}
		s.release()
		if err != nil {
			return
		}
	}
}

// acquire takes the right to write for c, waiting at most until c's write
// deadline; a fin (closing) waits even on a closed channel.
func (s *muxSession) acquire(c *muxChannel, closing bool) error {
	if c.wdl.passed() {
		return os.ErrDeadlineExceeded
	}
	var shut <-chan struct{}
	if !closing {
		shut = c.closed
	}
	select {
	case <-s.wtok:
		return nil
	case <-c.wdl.wait():
		return os.ErrDeadlineExceeded
	case <-shut:
		return c.closedErr()
	case <-s.failed:
		return s.failErr
	case <-s.closed:
		return errMuxSessionClosed
	}
}

func (s *muxSession) release() { s.wtok <- struct{}{} }

// writeConn writes b to the connection under c's write deadline (none
// for a nil c) and returns how much went out.
func (s *muxSession) writeConn(c *muxChannel, b []byte) (int, error) {
	var dl time.Time
	s.wmu.Lock()
	if c != nil {
		dl = c.wdl.time()
	}
	s.writer = c
	_ = s.conn.SetWriteDeadline(dl)
	s.wmu.Unlock()
	n, err := s.conn.Write(b)
	s.wmu.Lock()
	s.writer = nil
	s.wmu.Unlock()
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		select {
		case <-s.closed:
			return n, errMuxSessionClosed
		default:
		}
		s.fail(fmt.Errorf("writing to the connection: %w", err))
		return n, s.failErr
	}
	return n, err
}

// flushPending writes the rest of a cut-short frame, with the write token
// held.
func (s *muxSession) flushPending(c *muxChannel) error {
	if len(s.pending) == 0 {
		return nil
	}
	n, err := s.writeConn(c, s.pending)
	s.pending = s.pending[n:]
	return err
}

// writeFrame writes one frame of c's, the rest of a cut-short frame first.
// It returns how much of payload is committed: all of it once any of the
// frame has gone out (the rest follows before any other frame), none
// otherwise.
func (s *muxSession) writeFrame(c *muxChannel, kind byte, payload []byte, closing bool) (int, error) {
	if err := s.acquire(c, closing); err != nil {
		return 0, err
	}
	defer s.release()
	if err := s.flushPending(c); err != nil {
		return 0, err
	}
	if c.frame == nil {
		c.frame = make([]byte, muxHeaderLen+MuxMaxPayload)
	}
	frame := c.frame[:muxHeaderLen+len(payload)]
	putMuxHeader(frame, muxFrame{kind: kind, channel: c.index, length: len(payload)})
	copy(frame[muxHeaderLen:], payload)
	n, err := s.writeConn(c, frame)
	switch {
	case err == nil:
		return len(payload), nil
	case n > 0 && errors.Is(err, os.ErrDeadlineExceeded):
		s.pending = append(s.pending[:0], frame[n:]...)
		return len(payload), err
	}
	return 0, err
}

// State reads the connection's socket options and TCP_INFO.
func (s *muxSession) State() transport.State {
	st := transport.State{
		Arm:                        transport.Arm(TCPMux.Name()),
		Role:                       s.role,
		Channels:                   len(s.chans),
		Started:                    s.started,
		ConnectTime:                s.connect,
		CongestionControl:          s.sockopts.CongestionControl,
		RequestedCongestionControl: s.opts.CongestionControl,
		HostCongestionControl:      s.hostCC,
	}
	cs := transport.TCPConnState{
		Channel:    -1,
		LocalAddr:  s.conn.LocalAddr().String(),
		RemoteAddr: s.conn.RemoteAddr().String(),
		Options:    s.sockopts,
	}
	info, err := muxSockets.info(s.raw, time.Since(s.started))
	s.infoMu.Lock()
	if err != nil && s.lastSet {
		// The session closed the connection: what it read then.
		info, err = s.last, s.lastErr
	}
	if err != nil {
		cs.InfoError = err.Error()
	} else {
		cs.Info = info
	}
	cs.Series, cs.SeriesDropped = append([]transport.TCPInfo(nil), s.series...), s.seriesDropped
	s.infoMu.Unlock()
	st.TCP = []transport.TCPConnState{cs}
	return st
}

// sample takes TCP_INFO every Options.TCPInfoInterval until Close.
func (s *muxSession) sample() {
	limit := s.opts.MaxSamples
	if limit <= 0 {
		limit = 100000
	}
	t := time.NewTicker(s.opts.TCPInfoInterval)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		info, err := muxSockets.info(s.raw, time.Since(s.started))
		if err != nil {
			continue
		}
		s.infoMu.Lock()
		if len(s.series) < limit {
			s.series = append(s.series, info)
		} else {
			s.seriesDropped++
		}
		s.infoMu.Unlock()
	}
}

// muxChannel is one channel of a tcp-mux session; it is a
// transport.Channel.
type muxChannel struct {
	s     *muxSession
	index int

	rmu   sync.Mutex // one Read at a time
	wmu   sync.Mutex // one Write at a time, so a Write's frames stay in order
	frame []byte     // the frame being written, under wmu; made on first use

	mu       sync.Mutex // guards the fields below
	queue    []*[]byte  // received payloads; queue[0] is read from off
	lens     []int
	off      int
	buffered int64 // received and not yet read
	read     int64 // read (or dropped) and not yet returned as credit
	credit   int64 // what this end may still send
	rfin     bool  // the peer sent its fin
	rerr     error // why the connection ended, once it has
	wclosed  bool  // this end sent, or is sending, its fin
	isClosed bool

	closed   chan struct{} // closed by Close
	readable chan struct{} // a token when there is something for Read
	credited chan struct{} // a token when credit has arrived
	rdl, wdl deadline
}

func newMuxChannel(s *muxSession, i int) *muxChannel {
	return &muxChannel{
		s: s, index: i, credit: MuxWindow,
		closed: make(chan struct{}), readable: make(chan struct{}, 1), credited: make(chan struct{}, 1),
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Index is the channel's position in the session.
func (c *muxChannel) Index() int { return c.index }

func (c *muxChannel) closedErr() error {
	return fmt.Errorf("tcp-mux: channel %d is closed: %w", c.index, net.ErrClosed)
}

// deliver queues n bytes of buf for the reader; a closed channel drops
// them, and returns them as credit at once.
func (c *muxChannel) deliver(buf *[]byte, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.rfin:
		putMuxBuf(buf)
		return fmt.Errorf("data for channel %d after its fin", c.index)
	case c.buffered+c.read+int64(n) > MuxWindow:
		putMuxBuf(buf)
		return fmt.Errorf("the peer sent more than the %d-byte window on channel %d", MuxWindow, c.index)
	case c.isClosed:
		putMuxBuf(buf)
		c.readBytes(n)
		return nil
	}
	c.queue, c.lens = append(c.queue, buf), append(c.lens, n)
	c.buffered += int64(n)
	signal(c.readable)
	return nil
}

// readBytes counts n bytes read, and asks for credit to be returned once
// enough have been; c.mu is held.
func (c *muxChannel) readBytes(n int) {
	c.read += int64(n)
	if c.read >= muxCreditAfter {
		signal(c.s.credit)
	}
}

// takeCredit is the credit to return now, if enough has been read.
func (c *muxChannel) takeCredit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.read
	if n < muxCreditAfter {
		return 0
	}
	c.read = 0
	return n
}

// addCredit takes the peer's credit for n more bytes.
func (c *muxChannel) addCredit(n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n == 0 || c.credit+n > MuxWindow {
		return fmt.Errorf("credit of %d bytes for channel %d, which has %d of its %d-byte window", n, c.index, c.credit, MuxWindow)
	}
	c.credit += n
	signal(c.credited)
	return nil
}

// finish records the peer's fin.
func (c *muxChannel) finish() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rfin {
		return fmt.Errorf("a second fin for channel %d", c.index)
	}
	c.rfin = true
	signal(c.readable)
	return nil
}

// end records that the connection has ended: err nil for a clean end
// between frames.
func (c *muxChannel) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.rfin = true
	} else {
		c.rerr = err
	}
	signal(c.readable)
}

// shut marks the channel closed and drops what it holds.
func (c *muxChannel) shut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed {
		return false
	}
	c.isClosed = true
	close(c.closed)
	for _, b := range c.queue {
		putMuxBuf(b)
	}
	c.readBytes(int(c.buffered))
	c.queue, c.lens, c.off, c.buffered = nil, nil, 0, 0
	signal(c.readable)
	return true
}

// Read reads the channel's bytes in order. It returns io.EOF once the peer
// has ended the channel (CloseWrite, Close, or closing the session) and
// everything before that has been read.
func (c *muxChannel) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		c.mu.Lock()
		switch {
		case c.isClosed:
			c.mu.Unlock()
			return 0, c.closedErr()
		case c.rdl.passed():
			c.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		case c.buffered > 0:
			n := 0
			for n < len(p) && len(c.queue) > 0 {
				k := copy(p[n:], (*c.queue[0])[c.off:c.lens[0]])
				n += k
				c.off += k
				if c.off == c.lens[0] {
					putMuxBuf(c.queue[0])
					c.queue, c.lens, c.off = c.queue[1:], c.lens[1:], 0
				}
			}
			c.buffered -= int64(n)
			c.readBytes(n)
			c.mu.Unlock()
			return n, nil
		case len(p) == 0:
			c.mu.Unlock()
			return 0, nil
		case c.rfin:
			c.mu.Unlock()
			return 0, io.EOF
		case c.rerr != nil:
			err := c.rerr
			c.mu.Unlock()
			return 0, err
		}
		c.mu.Unlock()
		select {
		case <-c.readable:
		case <-c.rdl.wait():
		}
	}
}

// reserve waits until the channel may send, and takes up to n bytes of
// its credit.
func (c *muxChannel) reserve(n int) (int, error) {
	for {
		c.mu.Lock()
		switch {
		case c.isClosed:
			c.mu.Unlock()
			return 0, c.closedErr()
		case c.wclosed:
			c.mu.Unlock()
			return 0, fmt.Errorf("tcp-mux: write on channel %d after CloseWrite", c.index)
		case c.wdl.passed():
			c.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		case c.credit > 0:
			k := int(min(int64(n), c.credit))
			c.credit -= int64(k)
			c.mu.Unlock()
			return k, nil
		}
		c.mu.Unlock()
		select {
		case <-c.credited:
		case <-c.wdl.wait():
		case <-c.closed:
		case <-c.s.failed:
			return 0, c.s.failErr
		case <-c.s.closed:
			return 0, errMuxSessionClosed
		}
	}
}

// Write writes p as frames of at most MuxMaxPayload bytes, each waiting
// for the peer's credit.
func (c *muxChannel) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := 0
	for n < len(p) {
		k, err := c.reserve(min(len(p)-n, MuxMaxPayload))
		if err != nil {
			return n, err
		}
		sent, err := c.s.writeFrame(c, muxData, p[n:n+k], false)
		n += sent
		if sent < k {
			c.mu.Lock()
			c.credit += int64(k - sent)
			c.mu.Unlock()
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// CloseWrite sends the channel's fin after what was written: the peer
// reads io.EOF. Reading goes on.
func (c *muxChannel) CloseWrite() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	if c.isClosed {
		c.mu.Unlock()
		return c.closedErr()
	}
	if c.wclosed {
		c.mu.Unlock()
		return nil
	}
	c.wclosed = true
	c.mu.Unlock()
	return c.sendFin()
}

func (c *muxChannel) sendFin() error {
	if _, err := c.s.writeFrame(c, muxFin, nil, true); err != nil {
		return fmt.Errorf("tcp-mux: sending the end of channel %d: %w", c.index, err)
	}
	return nil
}

// Close ends the channel both ways: its fin is sent (unless CloseWrite
// sent it), unread bytes are dropped, and so is whatever still arrives.
func (c *muxChannel) Close() error {
	c.mu.Lock()
	wclosed := c.wclosed
	c.wclosed = true
	c.mu.Unlock()
	if !c.shut() || wclosed {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.sendFin()
}

// SetDeadline sets both deadlines.
func (c *muxChannel) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds Read, including one already waiting.
func (c *muxChannel) SetReadDeadline(t time.Time) error {
	c.rdl.set(t)
	return nil
}

// SetWriteDeadline bounds Write, including one already waiting or
// writing.
func (c *muxChannel) SetWriteDeadline(t time.Time) error {
	c.wdl.set(t)
	c.s.wmu.Lock()
	if c.s.writer == c {
		_ = c.s.conn.SetWriteDeadline(t)
	}
	c.s.wmu.Unlock()
	return nil
}

// deadline is a time that may be moved, with a channel that is closed
// while the time has passed. The zero value has no deadline.
type deadline struct {
	mu    sync.Mutex
	t     time.Time
	gen   int // counts set calls, so that a stale timer does nothing
	timer *time.Timer
	ch    chan struct{} // closed while t has passed
}

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.t = t
	if d.ch == nil || isClosed(d.ch) {
		d.ch = make(chan struct{})
	}
	if t.IsZero() {
		return
	}
	wait := time.Until(t)
	if wait <= 0 {
		close(d.ch)
		return
	}
	gen := d.gen
	d.timer = time.AfterFunc(wait, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.gen == gen && !isClosed(d.ch) {
			close(d.ch)
		}
	})
}

func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ch == nil {
		d.ch = make(chan struct{})
	}
	return d.ch
}

func (d *deadline) passed() bool { return isClosed(d.wait()) }

func (d *deadline) time() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

var muxBufs = sync.Pool{New: func() any {
	b := make([]byte, MuxMaxPayload)
	return &b
}}

func getMuxBuf() *[]byte  { return muxBufs.Get().(*[]byte) }
func putMuxBuf(b *[]byte) { muxBufs.Put(b) }
