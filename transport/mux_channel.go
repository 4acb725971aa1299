package transport

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// muxChannel is one channel of a tcp-mux session; it is a
// Channel.
type muxChannel struct {
	s     *MuxSession
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

func newMuxChannel(s *MuxSession, i int) *muxChannel {
	return &muxChannel{
		s: s, index: i, credit: muxWindow,
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

// deliver queues n bytes of buf for the reader, copied into the last
// buffer queued when they fit there, so that small frames do not each
// hold a buffer; a closed channel drops them, and returns them as credit
// at once.
func (c *muxChannel) deliver(buf *[]byte, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.rfin:
		putMuxBuf(buf)
		return fmt.Errorf("data for channel %d after its fin", c.index)
	case c.buffered+c.read+int64(n) > muxWindow:
		putMuxBuf(buf)
		return fmt.Errorf("the peer sent more than the %d-byte window on channel %d", muxWindow, c.index)
	case c.isClosed:
		putMuxBuf(buf)
		c.readBytes(n)
		return nil
	}
	if last := len(c.queue) - 1; last >= 0 && n <= len(*c.queue[last])-c.lens[last] {
		copy((*c.queue[last])[c.lens[last]:], (*buf)[:n])
		c.lens[last] += n
		putMuxBuf(buf)
	} else {
		c.queue, c.lens = append(c.queue, buf), append(c.lens, n)
	}
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
	if n == 0 || c.credit+n > muxWindow {
		return fmt.Errorf("credit of %d bytes for channel %d, which has %d of its %d-byte window", n, c.index, c.credit, muxWindow)
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

// Write writes p as frames of at most 16 KiB, each waiting
// for the peer's credit.
func (c *muxChannel) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := 0
	for n < len(p) {
		k, err := c.reserve(min(len(p)-n, muxMaxPayload))
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
	b := make([]byte, muxMaxPayload)
	return &b
}}

func getMuxBuf() *[]byte  { return muxBufs.Get().(*[]byte) }
func putMuxBuf(b *[]byte) { muxBufs.Put(b) }
