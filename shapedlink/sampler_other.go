//go:build !linux

package shapedlink

import (
	"context"
	"time"
)

// Sampler polls one end's egress queue. Samplers need Linux: elsewhere
// none exists, and its methods return errors wrapping
// errors.ErrUnsupported, or zero values.
type Sampler struct {
	_ [0]func() // not comparable, as on Linux
}

// NewQdiscSampler returns a sampler for the root qdisc of dev in ns; here
// it fails.
func NewQdiscSampler(ns *Namespace, dev string) (*Sampler, error) {
	return nil, errUnsupported
}

// Poll takes one sample now; here it fails.
func (s *Sampler) Poll() (QueueSample, error) { return QueueSample{}, errUnsupported }

// Run polls until ctx is done; here it fails at once with no samples.
func (s *Sampler) Run(ctx context.Context, interval time.Duration) ([]QueueSample, error) {
	return nil, errUnsupported
}

// Close does nothing here.
func (s *Sampler) Close() error { return nil }
