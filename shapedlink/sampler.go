package shapedlink

import (
	"context"
	"sync"
	"time"
)

// Sampler polls one end's egress queue: netem's qdisc statistics, or the
// emulator's or in-process link's counters, as the same QueueSample. It is
// for one goroutine at a time.
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
// ctx is done, which is not an error, and returns the samples; a failed
// poll ends it with the samples so far.
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

// Close releases the sampler's netlink socket, if it has one.
func (s *Sampler) Close() error {
	s.once.Do(func() {
		if s.close != nil {
			s.close()
		}
	})
	return nil
}

// QueueSample is one poll of an end's egress queue: netem's backlog, or
// the emulator's queue and delay line, for every backend alike.
type QueueSample struct {
	At      time.Time `json:"at"`
	Packets int       `json:"packets"` // packets held (netem: queue plus delay line; with a queue discipline, its queue)
	Bytes   int       `json:"bytes"`   // bytes held, link-layer header included
	// Drops counts every packet this end's shaping dropped since the
	// link was built; the emulator splits them into LossDrops and
	// LimitDrops (zero with netem).
	Drops      uint64 `json:"drops"`
	LossDrops  uint64 `json:"loss_drops"`
	LimitDrops uint64 `json:"limit_drops"`
	// Flows are the emulator's fullest FQ-CoDel flow queues, at most 8.
	Flows []FlowSample `json:"flows,omitempty"`
}

// FlowSample is one FQ-CoDel flow queue's occupancy.
type FlowSample struct {
	Queue   int `json:"queue"` // the flow queue: the 5-tuple's hash modulo the flows
	Packets int `json:"packets"`
	Bytes   int `json:"bytes"`
}
