package inproc

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Config is what New builds: the two directions, resolved and loaded
// (Dirs[linkspec.Down] carries what end 0 sends to end 1), each end's
// address, and where the per-packet trace goes.
type Config struct {
	Dirs  [2]linkspec.Direction
	Addrs [2]netip.Addr
	// Trace, when set, is told of every datagram's fate (see Event). It is
	// called with the direction's lock held, from whichever goroutine
	// moved the datagram on (a writer, or the direction's own); the two
	// directions may call it at once. It must return quickly and must not
	// call the link.
	Trace func(Event)
}

// Link is the two ends and the two directions between them.
type Link struct {
	base  time.Time
	addrs [2]netip.Addr
	ends  [2]*end
	dirs  [2]*direction
	trace func(Event)

	stop      chan struct{}
	done      sync.WaitGroup
	closeOnce sync.Once
}

// New builds the link for cfg and starts a goroutine per direction, in
// the caller's synctest bubble if it has one. Close ends them.
func New(cfg Config) (*Link, error) {
	for i, a := range cfg.Addrs {
		if !a.Is4() {
			return nil, fmt.Errorf("inproc: end %d's address %v is not an IPv4 address", i, a)
		}
	}
	if cfg.Addrs[0] == cfg.Addrs[1] {
		return nil, fmt.Errorf("inproc: both ends have the address %v", cfg.Addrs[0])
	}
	for d, dir := range cfg.Dirs {
		if key, why := dir.CheckLoaded(); why != "" {
			return nil, fmt.Errorf("inproc: the %s direction's %s: %s", linkspec.Dir(d), key, why)
		}
	}
	l := &Link{base: time.Now(), addrs: cfg.Addrs, trace: cfg.Trace, stop: make(chan struct{})}
	for i := range l.ends {
		l.ends[i] = newEnd(l, i)
	}
	for d := range l.dirs {
		l.dirs[d] = newDirection(l, linkspec.Dir(d), cfg.Dirs[d])
	}
	for _, d := range l.dirs {
		l.done.Add(1)
		go d.run()
	}
	return l, nil
}

// Base is when the link was built: the time its schedules and traces
// count from, and Event.At's zero.
func (l *Link) Base() time.Time { return l.base }

// Counters is direction d's account so far, with the gauges (what it
// holds now) filled in.
func (l *Link) Counters(d linkspec.Dir) linkspec.Counters {
	dir := l.dirs[d]
	dir.mu.Lock()
	defer dir.mu.Unlock()
	c := dir.c
	p, b := dir.carry.Model.Held()
	c.Packets, c.Bytes = uint64(p), uint64(b)
	q, _ := dir.carry.Model.QueueLen()
	c.Queued = uint64(q)
	return c
}

// errLinkClosed is what a write to a closed link returns (wrapped in a
// net.OpError).
var errLinkClosed = errors.New("the in-process link was closed")

// Close stops both directions' goroutines, drops the datagrams in flight
// and closes every socket, waking its readers. It is idempotent.
func (l *Link) Close() error {
	l.closeOnce.Do(func() {
		close(l.stop)
		l.done.Wait()
		for _, d := range l.dirs {
			d.mu.Lock()
			d.closed = true
			d.mu.Unlock()
		}
		for _, e := range l.ends {
			e.closeAll()
		}
	})
	return nil
}
