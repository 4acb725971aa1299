package linkspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// A Schedule is a list of timed changes to one direction of a link,
// applied in place while the link runs (profile option schedule=SPEC). Its
// times count from the link's start (when New returns, give or take the
// shaper's start-up); with a Period it repeats every Period.
//
// SPEC is a generator, blackout:DUR/EVERY[/hold] or step:HI/LO/DUR/EVERY,
// or a JSON file of changes. A change applies to the frames that arrive
// from its time on; frames already accepted keep their times. A blackout
// drops what arrives while the direction is down, or, with hold (not on
// netem), holds it until the link is back up. docs/link-description.md,
// "Schedules and traces", has the formats and the semantics.
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
		if s.Period > 0 && c.At >= s.Period || c.At < 0 {
			return bad(fmt.Sprintf("is outside the period %v", s.Period))
		}
		if i > 0 && c.At < s.Changes[i-1].At {
			return bad("is before the change ahead of it; a schedule's changes are in time order")
		}
		switch c.Dir {
		case "", "down", "up":
		default:
			return bad(fmt.Sprintf("names direction %q; want down or up", c.Dir))
		}
		switch c.Set {
		case "rate":
			if !(c.Value > 0 && c.Value <= MaxRateMbit) {
				return bad(fmt.Sprintf("needs a rate above 0 and at most %d Mbit/s", MaxRateMbit))
			}
			if !WholeBytes(c.Value) {
				return bad("has a rate of " + FmtNum(c.Value) + " Mbit/s, which " + RateReason(c.Value))
			}
		case "delay":
			if !(c.Value >= 0 && c.Value <= float64(MaxRTT.Milliseconds())) {
				return bad(fmt.Sprintf("needs a one-way delay between 0 and %d ms", MaxRTT.Milliseconds()))
			}
			if us := c.Value * 1000; math.Abs(us-math.Round(us)) > 1e-12*max(1, us) {
				return bad(fmt.Sprintf("has a delay of %s ms, not a whole number of microseconds, the unit the backends apply", FmtNum(c.Value)))
			}
		case "loss":
			if !(c.Value >= 0 && c.Value < 100) {
				return bad("needs a loss percentage from 0 to under 100 (use down for a blackout)")
			}
			if r := PctReason(c.Value); r != "" {
				return bad("has a loss of " + FmtNum(c.Value) + "%, which " + r)
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

// holds reports whether a change of s holds frames during a blackout.
func (s Schedule) holds() bool {
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
