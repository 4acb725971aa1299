package shapedlink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Schedule is a list of timed changes to one direction of a link,
// applied in place while the link runs (profile option schedule=SPEC). Its
// times count from the link's start (when New returns, give or take the
// shaper's start-up); with a Period it repeats every Period.
//
// SPEC is a generator or a file:
//
//	blackout:DUR/EVERY[/hold]   the direction is down for DUR every EVERY,
//	                            first half a period in; what is sent while
//	                            down is dropped (or, with hold, held and
//	                            sent when the link is back up)
//	step:HI/LO/DUR/EVERY        the rate is LO Mbit/s for DUR every EVERY,
//	                            first half a period in, and HI otherwise
//	PATH.json                   a schedule file (below)
//
// Durations take a unit (300ms, 10s, 1.5s). A schedule file is JSON:
//
//	{"period": "20s",
//	 "changes": [
//	   {"at": "10s", "set": "rate", "value": 2},
//	   {"at": "15s", "set": "rate", "value": 10},
//	   {"at": "12s", "dir": "up", "set": "down", "hold": true},
//	   {"at": "12.3s", "dir": "up", "set": "up"}]}
//
// "set" is rate (Mbit/s), delay (one-way ms), loss (percent), limit
// (packets), down or up; "dir" (down or up) limits a change to one
// direction, and a change without it applies to every direction the
// schedule is given to. A period of "0s" or none runs the changes once.
//
// What a change means, on both backends: it applies to the frames that
// arrive from its time on; frames already accepted keep the times they
// were given (as netem keeps the time_to_send of what it holds when it is
// changed). A blackout that drops loses every frame arriving while the
// direction is down; one that holds (emulator only) accepts them, subject
// to the limit, and starts serialising them when it is back up.
type Schedule struct {
	Spec    string        // as written in the profile
	Period  time.Duration // 0: the changes run once
	Changes []Change      // in time order
}

// Change is one timed change of a schedule.
type Change struct {
	At    time.Duration `json:"at"`
	Set   string        `json:"set"`             // rate, delay, loss, limit, down or up
	Value float64       `json:"value,omitempty"` // Mbit/s, ms, percent or packets
	Hold  bool          `json:"hold,omitempty"`  // for down: hold rather than drop
	Dir   string        `json:"dir,omitempty"`   // "", "down" or "up" (files only)
}

// MaxScheduleChanges bounds a schedule's length, so a mistaken file
// cannot make the shaper's configuration enormous.
const MaxScheduleChanges = 100000

// LoadSchedule reads a schedule spec (see Schedule): a generator, or a
// JSON file. The changes of a file that name a direction are all kept;
// ForDir keeps one direction's.
func LoadSchedule(spec string) (Schedule, error) {
	s := Schedule{Spec: spec}
	kind, args, _ := strings.Cut(spec, ":")
	var err error
	switch {
	case kind == "blackout":
		err = s.blackout(args)
	case kind == "step":
		err = s.step(args)
	case strings.HasSuffix(spec, ".json"):
		err = s.readFile(spec)
	default:
		err = fmt.Errorf("is neither a generator (blackout:DUR/EVERY[/hold], step:HI/LO/DUR/EVERY) nor a .json file")
	}
	if err != nil {
		return Schedule{}, fmt.Errorf("shapedlink: schedule %q %w", spec, err)
	}
	if err := s.validate(); err != nil {
		return Schedule{}, fmt.Errorf("shapedlink: schedule %q: %w", spec, err)
	}
	return s, nil
}

func (s *Schedule) blackout(args string) error {
	parts := strings.Split(args, "/")
	if len(parts) < 2 || len(parts) > 3 || len(parts) == 3 && parts[2] != "hold" && parts[2] != "drop" {
		return fmt.Errorf("wants blackout:DUR/EVERY or blackout:DUR/EVERY/hold (e.g. blackout:300ms/10s)")
	}
	dur, err := parseSpan(parts[0])
	if err != nil {
		return fmt.Errorf("duration %w", err)
	}
	every, err := parseSpan(parts[1])
	if err != nil {
		return fmt.Errorf("period %w", err)
	}
	if dur >= every/2 {
		return fmt.Errorf("has a blackout of %v every %v; it must be shorter than half the period", dur, every)
	}
	hold := len(parts) == 3 && parts[2] == "hold"
	s.Period = every
	s.Changes = []Change{{At: every / 2, Set: "down", Hold: hold}, {At: every/2 + dur, Set: "up"}}
	return nil
}

func (s *Schedule) step(args string) error {
	parts := strings.Split(args, "/")
	if len(parts) != 4 {
		return fmt.Errorf("wants step:HI/LO/DUR/EVERY (Mbit/s, Mbit/s, duration, period; e.g. step:10/2/5s/20s)")
	}
	var rates [2]float64
	for i, p := range parts[:2] {
		v, err := parseDecimal(p)
		if err != nil || v <= 0 {
			return fmt.Errorf("rate %q is not a positive Mbit/s", p)
		}
		rates[i] = v
	}
	dur, err := parseSpan(parts[2])
	if err != nil {
		return fmt.Errorf("duration %w", err)
	}
	every, err := parseSpan(parts[3])
	if err != nil {
		return fmt.Errorf("period %w", err)
	}
	if dur >= every/2 {
		return fmt.Errorf("steps down for %v every %v; that must be shorter than half the period", dur, every)
	}
	s.Period = every
	s.Changes = []Change{{At: every / 2, Set: "rate", Value: rates[1]}, {At: every/2 + dur, Set: "rate", Value: rates[0]}}
	return nil
}

// scheduleFile is the JSON form of a schedule file.
type scheduleFile struct {
	Period  string `json:"period"`
	Changes []struct {
		At    string  `json:"at"`
		Set   string  `json:"set"`
		Value float64 `json:"value"`
		Hold  bool    `json:"hold"`
		Dir   string  `json:"dir"`
	} `json:"changes"`
}

func (s *Schedule) readFile(path string) error {
	b, err := readSpecFile(path, 16<<20)
	if err != nil {
		return err
	}
	var f scheduleFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("is not a schedule file (JSON with period and changes): %w", err)
	}
	if f.Period != "" {
		if s.Period, err = time.ParseDuration(f.Period); err != nil || s.Period < 0 {
			return fmt.Errorf("has period %q; want a duration such as 20s", f.Period)
		}
	}
	for i, c := range f.Changes {
		at, err := time.ParseDuration(c.At)
		if err != nil || at < 0 {
			return fmt.Errorf("change %d has at %q; want a duration such as 10s", i, c.At)
		}
		s.Changes = append(s.Changes, Change{At: at, Set: c.Set, Value: c.Value, Hold: c.Hold, Dir: c.Dir})
	}
	slices.SortStableFunc(s.Changes, func(a, b Change) int { return int(a.At - b.At) })
	return nil
}

func (s Schedule) validate() error {
	if len(s.Changes) == 0 {
		return fmt.Errorf("has no changes")
	}
	if len(s.Changes) > MaxScheduleChanges {
		return fmt.Errorf("has %d changes; at most %d", len(s.Changes), MaxScheduleChanges)
	}
	for i, c := range s.Changes {
		bad := func(why string) error { return fmt.Errorf("change %d (%s at %v) %s", i, c.Set, c.At, why) }
		if s.Period > 0 && c.At >= s.Period {
			return bad(fmt.Sprintf("is at or after the period %v", s.Period))
		}
		switch c.Dir {
		case "", "down", "up":
		default:
			return bad(fmt.Sprintf("names direction %q; want down or up", c.Dir))
		}
		switch c.Set {
		case "rate":
			if !(c.Value > 0 && c.Value <= 100000) {
				return bad("needs a rate between 0 and 100000 Mbit/s")
			}
		case "delay":
			if !(c.Value >= 0 && c.Value <= float64(MaxRTT.Milliseconds())) {
				return bad(fmt.Sprintf("needs a one-way delay between 0 and %d ms", MaxRTT.Milliseconds()))
			}
		case "loss":
			if !(c.Value >= 0 && c.Value < 100) {
				return bad("needs a loss percentage from 0 to under 100 (use down for a blackout)")
			}
		case "limit":
			if c.Value < 1 || c.Value != math.Trunc(c.Value) || c.Value > 1<<20 {
				return bad("needs a whole number of packets from 1 to 1048576")
			}
		case "down", "up":
			if c.Hold && c.Set == "up" {
				return bad("holds, which only a down change does")
			}
		default:
			return bad("sets nothing known; set is rate, delay, loss, limit, down or up")
		}
	}
	return nil
}

// ForDir is s with only the changes for direction d (those naming no
// direction and those naming d).
func (s Schedule) ForDir(d Dir) Schedule {
	out := Schedule{Spec: s.Spec, Period: s.Period}
	for _, c := range s.Changes {
		if c.Dir == "" || c.Dir == d.String() {
			out.Changes = append(out.Changes, c)
		}
	}
	return out
}

// Holds reports whether a change of s holds frames during a blackout.
func (s Schedule) Holds() bool {
	return slices.ContainsFunc(s.Changes, func(c Change) bool { return c.Hold })
}

// parseSpan reads a positive duration with a unit, at most an hour.
func parseSpan(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > time.Hour {
		return 0, fmt.Errorf("%q is not a duration with a unit between 0 and 1h (e.g. 300ms, 10s)", v)
	}
	return d, nil
}

// A Trace is Mahimahi's trace format for one direction's rate (profile
// option trace=SPEC): each line a time in milliseconds at which one
// 1500-byte delivery opportunity occurs, times never decreasing; the trace
// repeats with the last time as its period. At each opportunity the link
// may deliver up to 1500 bytes of the frames that arrived before it
// (a frame longer than what is left carries over to the next opportunity,
// and what a frame leaves unused goes to the next frame); opportunities
// with nothing queued are lost. This is mm-link's rule. A trace replaces
// the direction's rate, so it is the emulator's alone.
//
// SPEC is a file, or a generator written by this package:
//
//	const:MBIT               evenly spaced opportunities for MBIT Mbit/s
//	cell:MBIT/CV[/SEED]      a cellular-like rate: every 100 ms the rate
//	                         moves as a log-normal AR(1) process
//	                         (correlation 0.9 from one 100 ms to the next)
//	                         with coefficient of variation CV, scaled so
//	                         its mean over the trace's 60 s is MBIT
type Trace struct {
	Spec string
	// Ms are the opportunity times in milliseconds, never decreasing;
	// the last is the period.
	Ms []uint32
}

// TraceOpportunity is the bytes one delivery opportunity carries.
const TraceOpportunity = 1500

// MaxTraceLines bounds a trace's length (a period of five minutes at
// 100 Mbit/s).
const MaxTraceLines = 2_500_000

// LoadTrace reads or generates a trace (see Trace).
func LoadTrace(spec string) (Trace, error) {
	t := Trace{Spec: spec}
	kind, args, _ := strings.Cut(spec, ":")
	var err error
	switch kind {
	case "const":
		err = t.constant(args)
	case "cell":
		err = t.cell(args)
	default:
		err = t.readFile(spec)
	}
	if err != nil {
		return Trace{}, fmt.Errorf("shapedlink: trace %q %w", spec, err)
	}
	return t, nil
}

// MeanMbit is the trace's mean rate over its period.
func (t Trace) MeanMbit() float64 {
	if len(t.Ms) == 0 || t.Ms[len(t.Ms)-1] == 0 {
		return 0
	}
	return float64(len(t.Ms)) * TraceOpportunity * 8 / float64(t.Ms[len(t.Ms)-1]) / 1e3
}

// Period is the time after which the trace repeats.
func (t Trace) Period() time.Duration {
	if len(t.Ms) == 0 {
		return 0
	}
	return time.Duration(t.Ms[len(t.Ms)-1]) * time.Millisecond
}

// Opportunities counts the trace's opportunities in [from, to), the trace
// repeating from time zero.
func (t Trace) Opportunities(from, to time.Duration) int {
	period := t.Period()
	if period <= 0 {
		return 0
	}
	n := 0
	for c := from / period * period; c < to; c += period {
		for _, ms := range t.Ms {
			if at := c + time.Duration(ms)*time.Millisecond; at >= from && at < to {
				n++
			}
		}
	}
	return n
}

// Format is t in Mahimahi's format, one time per line.
func (t Trace) Format() string {
	var b strings.Builder
	for _, ms := range t.Ms {
		b.WriteString(strconv.FormatUint(uint64(ms), 10))
		b.WriteByte('\n')
	}
	return b.String()
}

func (t *Trace) readFile(path string) error {
	b, err := readSpecFile(path, 11*MaxTraceLines)
	if err != nil {
		return fmt.Errorf("is not a generator (const:MBIT, cell:MBIT/CV[/SEED]) and %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > MaxTraceLines {
		return fmt.Errorf("has %d lines; at most %d", len(lines), MaxTraceLines)
	}
	var last uint64
	for i, line := range lines {
		ms, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32)
		if err != nil {
			return fmt.Errorf("line %d %q is not a time in whole milliseconds", i+1, line)
		}
		if ms < last {
			return fmt.Errorf("line %d goes back in time (%d after %d); times must never decrease", i+1, ms, last)
		}
		last = ms
		t.Ms = append(t.Ms, uint32(ms))
	}
	if last == 0 {
		return fmt.Errorf("lasts no time (its last line is 0); the last time is the period")
	}
	return nil
}

// constant spreads opportunities evenly over a 10 s period (long, so the
// closing opportunity spread adds is a negligible excess).
func (t *Trace) constant(args string) error {
	mbit, err := parseDecimal(args)
	if err != nil || mbit < 0.012 || mbit > 10000 {
		return fmt.Errorf("wants const:MBIT with a rate from 0.012 to 10000 Mbit/s")
	}
	t.Ms = spread([]float64{mbit}, 10000)
	return nil
}

// cell generates the cellular-like trace.
func (t *Trace) cell(args string) error {
	parts := strings.Split(args, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return fmt.Errorf("wants cell:MBIT/CV or cell:MBIT/CV/SEED (e.g. cell:10/0.5)")
	}
	mean, err := parseDecimal(parts[0])
	if err != nil || mean < 0.1 || mean > 1000 {
		return fmt.Errorf("mean %q is not a rate from 0.1 to 1000 Mbit/s", parts[0])
	}
	cv, err := parseDecimal(parts[1])
	if err != nil || cv > 3 {
		return fmt.Errorf("coefficient of variation %q is not between 0 and 3", parts[1])
	}
	seed := uint64(1)
	if len(parts) == 3 {
		if seed, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
			return fmt.Errorf("seed %q is not a whole number", parts[2])
		}
	}
	const slots, phi = 600, 0.9 // 60 s of 100 ms
	sigma := math.Sqrt(math.Log1p(cv * cv))
	rng := splitmix(seed)
	rates := make([]float64, slots)
	x := 0.0
	for i := range rates {
		x = phi*x + sigma*math.Sqrt(1-phi*phi)*rng.normal()
		rates[i] = math.Exp(x)
	}
	var sum float64
	for _, r := range rates {
		sum += r
	}
	for i := range rates {
		rates[i] *= mean * slots / sum
	}
	t.Ms = spread(rates, 100)
	return nil
}

// spread places opportunities for rates (Mbit/s), each held for slotMs
// milliseconds in turn: a running credit of bytes, one opportunity at
// the first whole millisecond where it reaches 1500. The last time is the
// end of the last slot, so the trace's period is the slots' total length.
func spread(rates []float64, slotMs int) []uint32 {
	var ms []uint32
	credit := 0.0
	for s, r := range rates {
		perMs := r * 1e6 / 8 / 1000
		for k := 1; k <= slotMs; k++ {
			credit += perMs
			for credit >= TraceOpportunity {
				credit -= TraceOpportunity
				ms = append(ms, uint32(s*slotMs+k))
			}
		}
	}
	end := uint32(len(rates) * slotMs)
	if len(ms) == 0 || ms[len(ms)-1] != end {
		// The format takes the period from the last line, which is an
		// opportunity too: one more at the very end when the credit did
		// not put one there (1500 bytes a period too many).
		ms = append(ms, end)
	}
	return ms
}

// splitmix is a small seeded generator for the trace generators (their
// output must not change with Go's math/rand).
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// normal is a standard normal draw (Box-Muller).
func (s *splitmix) normal() float64 {
	u1 := (float64(s.next()>>11) + 0.5) / (1 << 53)
	u2 := float64(s.next()>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// readSpecFile reads a schedule or trace file: a regular file of at most
// limit bytes (not a device or a pipe that never ends).
func readSpecFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("is not a regular file")
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("is %d bytes; at most %d", st.Size(), limit)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	return b, nil
}

// AppliedChange is one change of a link's schedule placed in time: when
// it took effect (for the frames arriving from then on) and in which
// direction.
type AppliedChange struct {
	At    time.Time `json:"at"`
	Dir   string    `json:"dir"` // down or up
	Set   string    `json:"set"`
	Value float64   `json:"value,omitempty"`
	Hold  bool      `json:"hold,omitempty"`
	// AppliedAt is, for netem, when the kernel acknowledged the change of
	// the qdisc (it applies from then on, so netem's change lags At by
	// the difference); zero for the emulator, whose changes apply at At
	// exactly, to the frames' arrival stamps.
	AppliedAt time.Time `json:"applied_at,omitzero"`
}

// timeVarying is a profile's schedules and traces as loaded from their
// specs, per direction (indexed by Dir), each schedule already narrowed to
// its direction: read once per link, so that what is built, what chooses
// the backend and what is recorded come from one reading of any file.
type timeVarying struct {
	sched [2]*Schedule
	trace [2]*Trace
}

// loadTimeVarying reads p's schedules and traces.
func loadTimeVarying(p Profile) (timeVarying, error) {
	var tv timeVarying
	for _, d := range []Dir{Down, Up} {
		pd := p.Direction(d)
		if pd.Schedule != "" {
			s, err := LoadSchedule(pd.Schedule)
			if err != nil {
				return tv, err
			}
			s = s.ForDir(d)
			tv.sched[d] = &s
		}
		if pd.Trace != "" {
			t, err := LoadTrace(pd.Trace)
			if err != nil {
				return tv, err
			}
			tv.trace[d] = &t
		}
	}
	return tv, nil
}

// ScheduledChanges lists the changes of p's schedules that take effect in
// [from, to), for a link whose schedule started at start
// (Link.ScheduleStart), in time order.
func ScheduledChanges(p Profile, start, from, to time.Time) ([]AppliedChange, error) {
	tv, err := loadTimeVarying(p)
	if err != nil {
		return nil, err
	}
	return tv.changes(start, from, to), nil
}

// changes is ScheduledChanges for the loaded schedules.
func (tv timeVarying) changes(start, from, to time.Time) []AppliedChange {
	var out []AppliedChange
	for _, d := range []Dir{Down, Up} {
		if tv.sched[d] == nil {
			continue
		}
		s := *tv.sched[d]
		for k := 0; ; k++ {
			off := time.Duration(0)
			if s.Period > 0 {
				off = time.Duration(k) * s.Period
			} else if k > 0 {
				break
			}
			if start.Add(off).After(to) {
				break
			}
			for _, c := range s.Changes {
				at := start.Add(off + c.At)
				if !at.Before(from) && at.Before(to) {
					out = append(out, AppliedChange{At: at, Dir: d.String(), Set: c.Set, Value: c.Value, Hold: c.Hold})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b AppliedChange) int { return a.At.Compare(b.At) })
	return out
}
