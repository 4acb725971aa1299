package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Validate checks that a record is one this reader understands and that its
// figures are possible: the schema, a named arm and a positive repeat, a
// finish after the start, a warm-up shorter than the run, and no negative or
// non-finite figure.
func (r Run) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if r.Schema != SchemaVersion {
		bad("schema %d, this reader understands %d", r.Schema, SchemaVersion)
	}
	if r.Arm == "" {
		bad("no arm")
	}
	if r.Repeat < 1 {
		bad("repeat %d is not positive", r.Repeat)
	}
	if r.Started.IsZero() || r.Finished.Before(r.Started) {
		bad("finished %v is not after started %v", r.Finished, r.Started)
	}
	if r.Duration <= 0 || r.Warmup < 0 || r.Warmup >= r.Duration {
		bad("duration %v and warm-up %v: want 0 <= warm-up < duration", r.Duration, r.Warmup)
	}
	if r.Timeouts < 0 || r.BulkBytes < 0 || r.BulkBytesTotal < 0 || r.ConnectTime < 0 {
		bad("a negative count (timeouts %d, bulk bytes %d, total %d, connect %v)", r.Timeouts, r.BulkBytes, r.BulkBytesTotal, r.ConnectTime)
	}
	if !(r.ThroughputMbit >= 0) || math.IsInf(r.ThroughputMbit, 0) {
		bad("throughput %v Mbit/s is not a finite, non-negative number", r.ThroughputMbit)
	}
	for i, s := range r.Samples {
		if s.RTT < 0 || s.Offset < 0 {
			bad("sample %d has a negative round trip or offset (%v at %v)", i, s.RTT, s.Offset)
			break
		}
	}
	if p := r.Link.Probe; p != nil {
		figs := []float64{p.LossPct, p.RTTMinMs, p.RTTP50Ms, p.RTTP90Ms, p.RTTMaxMs}
		if p.Sent < 0 || p.Answered < 0 || p.Answered > p.Sent || slices.ContainsFunc(figs, func(f float64) bool { return !(f >= 0) || math.IsInf(f, 0) }) {
			bad("the path probe's figures are impossible (%d sent, %d answered, loss %v%%, round trips %v)", p.Sent, p.Answered, p.LossPct, figs[1:])
		}
	}
	for i, s := range r.Sessions {
		if s.Timeouts < 0 || !(s.ThroughputMbit >= 0) || math.IsInf(s.ThroughputMbit, 0) {
			bad("session %d has a negative or non-finite figure", i)
		}
		for _, x := range s.Samples {
			if x.RTT < 0 || x.Offset < 0 {
				bad("session %d has a negative round trip or offset", i)
				break
			}
		}
	}
	return errors.Join(errs...)
}
