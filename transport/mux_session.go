package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var errMuxSessionClosed = fmt.Errorf("tcp-mux: the session is closed: %w", net.ErrClosed)

// MuxSession is one end of a tcp-mux connection (DialMux,
// MuxListener.Accept): its Channels, State and Close are a session's.
type MuxSession struct {
	conn     *net.TCPConn
	raw      syscall.RawConn
	role     string
	opts     Options
	started  time.Time
	connect  time.Duration
	hostCC   string
	sockopts TCPSocketOptions
	chans    []*muxChannel
	// opened counts the channels open so far: all of a session's from the
	// start, a carrier's as their open frames go (client) or come
	// (server). A frame for a channel past it is refused.
	opened atomic.Int32

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
	series        []TCPInfo
	seriesDropped int
	// last is TCP_INFO read just before the session closed the
	// connection, for State after that.
	last    TCPInfo
	lastErr error
	lastSet bool
}

func newMuxSession(c *net.TCPConn, role string, o Options, started time.Time, hostCC string) (*MuxSession, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := controlTCP(raw, o); err != nil {
		return nil, fmt.Errorf("socket options: %w", err)
	}
	got, err := readTCPOptions(raw)
	if err != nil {
		return nil, fmt.Errorf("socket options: %w", err)
	}
	if o.CongestionControl != "" && got.CongestionControl != o.CongestionControl {
		return nil, fmt.Errorf("socket options: TCP_CONGESTION reads back %q after setting %q", got.CongestionControl, o.CongestionControl)
	}
	s := &MuxSession{
		conn: c, raw: raw, role: role, opts: o, started: started, hostCC: hostCC, sockopts: got,
		wtok: make(chan struct{}, 1), credit: make(chan struct{}, 1),
		closed: make(chan struct{}), failed: make(chan struct{}), demuxed: make(chan struct{}), closeConn: c.Close,
	}
	s.wtok <- struct{}{}
	for i := range o.Channels {
		s.chans = append(s.chans, newMuxChannel(s, i))
	}
	s.opened.Store(int32(len(s.chans)))
	return s, nil
}

// start runs the demultiplexer, the credit writer, and the TCP_INFO
// sampler when asked for.
func (s *MuxSession) start() {
	s.done.Go(s.demux)
	s.done.Go(s.returnCredit)
	if s.opts.TCPInfoInterval > 0 {
		s.done.Go(s.sample)
	}
}

// Channels are the session's channels, in the same order at both ends;
// each is also a Channel.
func (s *MuxSession) Channels() []io.ReadWriteCloser {
	out := make([]io.ReadWriteCloser, len(s.chans))
	for i, c := range s.chans {
		out[i] = c
	}
	return out
}

// Close closes every channel and the connection.
func (s *MuxSession) Close() error {
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
func (s *MuxSession) fail(err error) {
	s.failOnce.Do(func() {
		s.failErr = fmt.Errorf("tcp-mux %s: %w", s.role, err)
		close(s.failed)
		s.keepLastInfo()
		_ = s.closeConn()
	})
}

// keepLastInfo reads TCP_INFO once more before the session closes the
// connection, so that State still has it afterwards.
func (s *MuxSession) keepLastInfo() {
	info, err := readTCPInfo(s.raw, time.Since(s.started))
	s.infoMu.Lock()
	if !s.lastSet {
		s.last, s.lastErr, s.lastSet = info, err, true
	}
	s.infoMu.Unlock()
}

// demux reads frames and hands each channel its bytes until the
// connection ends. It never waits for a reader: the window bounds what a
// channel holds.
func (s *MuxSession) demux() {
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
		if f.kind != muxOpen && f.kind != muxRefuse && f.channel >= int(s.opened.Load()) {
			putMuxBuf(buf)
			err = fmt.Errorf("a %s frame for channel %d before its open frame", muxFrameName(f.kind), f.channel)
			break
		}
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
		case muxRefuse:
			err = fmt.Errorf("the listener refused this carrier: %s", p)
			if s.role != "client" {
				err = errors.New("a refusal frame from the client, which only a listener sends")
			}
			putMuxBuf(buf)
		case muxOpen:
			putMuxBuf(buf)
			err = errors.New("an open frame in a session, whose channels need none: is the peer a tcp-mux carrier?")
			if s.onOpen != nil {
				if err = s.onOpen(c); err == nil {
					s.opened.Add(1)
				}
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
func (s *MuxSession) returnCredit() {
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
func (s *MuxSession) acquire(c *muxChannel, closing bool) error {
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

func (s *MuxSession) release() { s.wtok <- struct{}{} }

// writeConn writes b to the connection under c's write deadline (none
// for a nil c) and returns how much went out.
func (s *MuxSession) writeConn(c *muxChannel, b []byte) (int, error) {
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
func (s *MuxSession) flushPending(c *muxChannel) error {
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
func (s *MuxSession) writeFrame(c *muxChannel, kind byte, payload []byte, closing bool) (int, error) {
	if err := s.acquire(c, closing); err != nil {
		return 0, err
	}
	defer s.release()
	if err := s.flushPending(c); err != nil {
		return 0, err
	}
	if c.frame == nil {
		c.frame = make([]byte, muxHeaderLen+muxMaxPayload)
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
func (s *MuxSession) State() State {
	st := State{
		Arm:                        ArmTCPMux,
		Role:                       s.role,
		Channels:                   len(s.chans),
		Started:                    s.started,
		ConnectTime:                s.connect,
		CongestionControl:          s.sockopts.CongestionControl,
		RequestedCongestionControl: s.opts.CongestionControl,
		HostCongestionControl:      s.hostCC,
	}
	cs := TCPConnState{
		Channel:    -1,
		LocalAddr:  s.conn.LocalAddr().String(),
		RemoteAddr: s.conn.RemoteAddr().String(),
		Options:    s.sockopts,
	}
	info, err := readTCPInfo(s.raw, time.Since(s.started))
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
	cs.Series, cs.SeriesDropped = append([]TCPInfo(nil), s.series...), s.seriesDropped
	s.infoMu.Unlock()
	st.TCP = []TCPConnState{cs}
	return st
}

// sample takes TCP_INFO every Options.TCPInfoInterval until Close.
func (s *MuxSession) sample() {
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
		info, err := readTCPInfo(s.raw, time.Since(s.started))
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
