package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
)

// Sampler polls one end's egress queue. For netem (or any root qdisc) it
// dumps the qdisc's statistics through one netlink socket opened once in
// the end's namespace; for the emulator it reads the shaper's shared
// counters, which costs no system call. Both give the same QueueSample.
// A Sampler is for one goroutine at a time.
type Sampler struct {
	poll  func(*QueueSample) error
	close func()
	once  sync.Once
}

// Poll takes one sample now.
func (s *Sampler) Poll() (QueueSample, error) {
	var q QueueSample
	err := s.poll(&q)
	return q, err
}

// Run polls every interval (DefaultSampleInterval if interval <= 0) until
// ctx is done and returns the samples. Cancelling ctx is the normal way to
// stop and is not an error; a failed poll ends the run with the samples
// taken so far and the error.
func (s *Sampler) Run(ctx context.Context, interval time.Duration) ([]QueueSample, error) {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	out := make([]QueueSample, 0, 4096)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var q QueueSample
		if err := s.poll(&q); err != nil {
			return out, err
		}
		out = append(out, q)
		select {
		case <-ctx.Done():
			return out, nil
		case <-t.C:
		}
	}
}

// Close releases the sampler's netlink socket.
func (s *Sampler) Close() error {
	s.once.Do(func() {
		if s.close != nil {
			s.close()
		}
	})
	return nil
}

// Sampler returns a sampler for end e's egress queue: the netem qdisc on
// that end's veth (the discipline under it, with one), or the emulator's
// queue for that direction.
func (in *Instruments) Sampler(e End) (*Sampler, error) {
	if err := e.valid(); err != nil {
		return nil, err
	}
	return in.l.shaper.sampler(e)
}

// SampleQueue samples end e's egress queue every interval until ctx is
// done; see Sampler.Run.
func (in *Instruments) SampleQueue(ctx context.Context, e End, interval time.Duration) ([]QueueSample, error) {
	s, err := in.Sampler(e)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, interval)
}

// NewQdiscSampler samples the root qdisc of device dev in ns: backlog in
// packets and bytes and its drop counter. It works on any qdisc that keeps
// statistics (netem, tbf, bfifo, htb...).
func NewQdiscSampler(ns *Namespace, dev string) (*Sampler, error) {
	return newQdiscSampler(ns, dev, 0)
}

// newQdiscSampler samples the qdisc with the given handle on dev, or the
// root qdisc when handle is 0.
func newQdiscSampler(ns *Namespace, dev string, handle uint32) (*Sampler, error) {
	h, err := ns.handle()
	if err != nil {
		return nil, err
	}
	link, err := h.LinkByName(dev)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("shapedlink: sampler: finding %s in the %s namespace: %w", dev, ns.role, err)
	}
	idx := link.Attrs().Index
	poll := func(q *QueueSample) error {
		qs, err := h.QdiscList(link)
		q.At = time.Now()
		if err != nil {
			return fmt.Errorf("shapedlink: sampler: listing qdiscs on %s: %w", dev, err)
		}
		for _, qd := range qs {
			a := qd.Attrs()
			if a.LinkIndex != idx || handle == 0 && a.Parent != netlink.HANDLE_ROOT || handle != 0 && a.Handle != handle {
				continue
			}
			if a.Statistics == nil || a.Statistics.Queue == nil {
				return fmt.Errorf("shapedlink: sampler: the qdisc %s (%s) on %s reports no queue statistics", netlink.HandleStr(a.Handle), qd.Type(), dev)
			}
			q.Packets = int(a.Statistics.Queue.Qlen)
			q.Bytes = int(a.Statistics.Queue.Backlog)
			q.Drops = uint64(a.Statistics.Queue.Drops)
			return nil
		}
		if handle != 0 {
			return fmt.Errorf("shapedlink: sampler: %s has no qdisc %s", dev, netlink.HandleStr(handle))
		}
		return errors.New("shapedlink: sampler: " + dev + " has no root qdisc")
	}
	return &Sampler{poll: poll, close: h.Close}, nil
}
