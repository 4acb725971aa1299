package results

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"
)

// Names that go into file names (a cell's directory, a plot's) must be
// names, never paths: an arm is lower-case words joined by hyphens, with
// any settings it carries each after a plus sign (tcp-bbr+defer10), a
// congestion control a kernel module's name (at most 15 characters,
// TCP_CA_NAME_MAX less its terminator).
var (
	armName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*(\+[a-z0-9]+)*$`)
	ccName  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,15}$`)
)

// maxTime bounds every time in a record (a run, a round trip, an offset):
// no run lasts a day, so a longer figure is corrupt. maxMbit bounds a
// throughput the same way (a terabit a second).
const (
	maxTime = 24 * time.Hour
	maxMbit = 1e6
)

// maxArmName bounds an arm's name.
const maxArmName = 48

// CheckArmName says why name cannot name an arm in a record, or nil: it
// must be lower-case letters and digits, words joined by hyphens, each
// setting it carries after a plus sign, at most 48 characters.
func CheckArmName(name string) error {
	if len(name) > maxArmName || !armName.MatchString(name) {
		return fmt.Errorf("arm %q is not an arm's name (lower-case letters and digits, words joined by hyphens, settings after a plus sign, at most %d characters, as in quic-per-channel or tcp-bbr+defer10)", name, maxArmName)
	}
	return nil
}

// Validate checks that a record is one this reader understands and that its
// figures are possible: the schema, a named arm and a positive repeat, a
// valid cell (Cell.validate), a finish after the start, a warm-up shorter
// than the run, and no negative or non-finite figure. Every field that
// goes into a file name is checked, so a record cannot steer a reader's
// writes (plots) out of their directory.
func (r Run) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if r.Schema != SchemaVersion {
		bad("schema %d, this reader understands %d", r.Schema, SchemaVersion)
	}
	switch {
	case r.Arm == "":
		bad("no arm")
	default:
		if err := CheckArmName(r.Arm); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.Cell.validate(); err != nil {
		errs = append(errs, err)
	}
	if r.Repeat < 1 {
		bad("repeat %d is not positive", r.Repeat)
	}
	if r.Started.IsZero() || r.Finished.Before(r.Started) {
		bad("finished %v is not after started %v", r.Finished, r.Started)
	}
	if r.Duration <= 0 || r.Warmup < 0 || r.Warmup >= r.Duration || r.Duration > maxTime {
		bad("duration %v and warm-up %v: want 0 <= warm-up < duration <= %v", r.Duration, r.Warmup, maxTime)
	}
	if r.Finished.Sub(r.Started) > maxTime || r.ConnectTime > maxTime {
		bad("started %v, finished %v, connect time %v: no run lasts over %v", r.Started, r.Finished, r.ConnectTime, maxTime)
	}
	if r.Timeouts < 0 || r.BulkBytes < 0 || r.BulkBytesTotal < 0 || r.ConnectTime < 0 {
		bad("a negative count (timeouts %d, bulk bytes %d, total %d, connect %v)", r.Timeouts, r.BulkBytes, r.BulkBytesTotal, r.ConnectTime)
	}
	if !(r.ThroughputMbit >= 0) || r.ThroughputMbit > maxMbit {
		bad("throughput %v Mbit/s is not a non-negative number of at most %v", r.ThroughputMbit, maxMbit)
	}
	for i, s := range r.Samples {
		if s.RTT < 0 || s.Offset < 0 || s.RTT > maxTime || s.Offset > maxTime {
			bad("sample %d has a round trip or offset that is negative or over %v (%v at %v)", i, maxTime, s.RTT, s.Offset)
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
		if s.Timeouts < 0 || !(s.ThroughputMbit >= 0) || s.ThroughputMbit > maxMbit {
			bad("session %d has a negative or impossible figure", i)
		}
		for _, x := range s.Samples {
			if x.RTT < 0 || x.Offset < 0 || x.RTT > maxTime || x.Offset > maxTime {
				bad("session %d has a round trip or offset that is negative or over %v", i, maxTime)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// validate checks that the cell's fields are possible and that those that
// go into its directory's name (Dir) are names: a congestion control's
// name, finite non-negative figures, a loss of at most 100%.
func (c Cell) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !ccName.MatchString(c.CC) {
		bad("cell congestion control %q is not a kernel congestion control's name (letters, digits, _ and -, 1 to 15 characters, as in reno)", c.CC)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"rtt_ms", c.RTTms}, {"rate_mbit", c.RateMbit}, {"loss_pct", c.LossPct}, {"bulk_cap_fraction", c.BulkCapFraction}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			bad("cell %s %v is not a finite, non-negative number", f.name, f.v)
		}
	}
	if c.LossPct > 100 {
		bad("cell loss_pct %v is over 100", c.LossPct)
	}
	if c.Sessions < 0 || c.BulkRateCapBps < 0 {
		bad("cell sessions %d or bulk_rate_cap_bps %d is negative", c.Sessions, c.BulkRateCapBps)
	}
	if err := c.validateAxes(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
