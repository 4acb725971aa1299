package spicelike

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

type bulkCounters struct {
	total, window, drained atomic.Int64
}

// bulk reads the saturating channel in its own goroutine and counts, and at
// the end of the run writes the end byte and stops reading.
func (c *client) bulk(i int) {
	ch, s := c.chans[i], c.states[i]
	cnt := c.bulkCount
	var stopping atomic.Bool
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		buf := make([]byte, max(c.cfg.BulkBufferSize, 64<<10))
		for {
			n, err := ch.Read(buf)
			if n > 0 {
				now := time.Now()
				switch {
				case !now.Before(c.end) || c.isDone():
					cnt.drained.Add(int64(n))
				case now.Before(c.warmEnd):
					cnt.total.Add(int64(n))
				default:
					cnt.total.Add(int64(n))
					cnt.window.Add(int64(n))
				}
			}
			if stopping.Load() {
				return
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = errors.New("server ended the bulk stream before the end of the run")
				}
				s.fail("run", err)
				c.finish() // a run without its bulk load is not the run asked for
				return
			}
		}
	}()
	select {
	case <-c.done:
	case <-readerDone:
		<-c.done
	}
	stopping.Store(true)
	if c.cancelled.Load() {
		<-readerDone
		return
	}
	stop := guard(ch, c.cfg.Timeout, interruptWrite)
	b := [1]byte{endByte}
	_, err := ch.Write(b[:])
	if !stop() {
		s.fail("end", fmt.Errorf("could not write the end byte within %v", c.cfg.Timeout))
	} else if err != nil {
		s.fail("end", fmt.Errorf("writing the end byte: %w", err))
	}
	// No more bulk data is wanted: stop the reader now rather than wait for
	// the server's writer to notice.
	if interruptRead(ch) {
		<-readerDone
	}
}

// collectBulk puts the saturating channel's byte counts and goodput into
// res.
func (c *client) collectBulk(res *ClientResult) {
	b := c.bulkCount
	if b == nil {
		return
	}
	res.BulkBytesTotal = b.total.Load()
	res.BulkBytesWindow = b.window.Load()
	res.BulkBytesDrained = b.drained.Load()
	if res.End.After(c.warmEnd) {
		res.BulkWindow = res.End.Sub(c.warmEnd)
		res.BulkMbps = float64(res.BulkBytesWindow) * 8 / res.BulkWindow.Seconds() / 1e6
	}
}
