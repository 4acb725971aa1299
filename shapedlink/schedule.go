package shapedlink

import (
	"slices"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// A Schedule is a list of timed changes to one direction of a link,
// applied in place while the link runs (profile option schedule=SPEC),
// with its Spec, Period (0: the changes run once) and Changes (in time
// order). SPEC is a generator, blackout:DUR/EVERY[/hold] or
// step:HI/LO/DUR/EVERY, or a JSON file of changes. A change applies to
// frames arriving from its time on; a blackout that holds (not on netem)
// queues rather than drops. ForDir narrows the schedule to one direction.
// docs/link-description.md, "Schedules and traces", has the file format
// and the semantics.
type Schedule = linkspec.Schedule

// Change is one timed change of a schedule: At, Set, Value, Hold, Dir.
type Change = linkspec.Change

// A Trace is a Mahimahi trace of one direction's rate (profile option
// trace=SPEC): one 1500-byte delivery opportunity at each time, the last
// the period. SPEC is a file, const:MBIT or cell:MBIT/CV[/SEED] (a
// cellular-like rate). netem cannot carry a trace.
type Trace struct {
	Spec string   // as written in the profile
	Ms   []uint32 // opportunity times in ms, never decreasing; the last is the period
}

// MeanMbit is the trace's mean rate over its period.
func (t Trace) MeanMbit() float64 { return linkspec.Trace(t).MeanMbit() }

// Period is the time after which the trace repeats.
func (t Trace) Period() time.Duration { return linkspec.Trace(t).Period() }

// Opportunities counts the trace's opportunities in [from, to), the trace
// repeating from time zero.
func (t Trace) Opportunities(from, to time.Duration) int {
	return linkspec.Trace(t).Opportunities(from, to)
}

// Format is t in Mahimahi's format, one time per line.
func (t Trace) Format() string { return linkspec.Trace(t).Format() }

// TraceOpportunity is the bytes one trace delivery opportunity carries.
const TraceOpportunity = linkspec.TraceOpportunity

// Bounds on a schedule's and a trace's length.
const (
	MaxScheduleChanges = linkspec.MaxScheduleChanges
	MaxTraceLines      = linkspec.MaxTraceLines
)

// LoadSchedule reads a schedule spec (see Schedule), both directions'
// changes.
func LoadSchedule(spec string) (Schedule, error) { return linkspec.LoadSchedule(spec) }

// LoadTrace reads or generates a trace (see Trace).
func LoadTrace(spec string) (Trace, error) {
	t, err := linkspec.LoadTrace(spec)
	return Trace(t), err
}

// AppliedChange is one change of a link's schedule placed in time.
type AppliedChange struct {
	At    time.Time `json:"at"`
	Dir   string    `json:"dir"` // down or up
	Set   string    `json:"set"`
	Value float64   `json:"value,omitempty"`
	Hold  bool      `json:"hold,omitempty"`
	// AppliedAt is when the kernel acknowledged netem's change; zero for
	// the emulator, whose changes apply at At exactly.
	AppliedAt time.Time `json:"applied_at,omitzero"`
}

// load resolves p's two directions with their schedules and traces read
// and checked; a link reads them once.
func (p Profile) load() ([2]Direction, error) {
	var dirs [2]Direction
	for _, d := range []Dir{Down, Up} {
		dir := p.Direction(d)
		if dir.Schedule != "" {
			s, err := LoadSchedule(dir.Schedule)
			if err != nil {
				return dirs, err
			}
			s = s.ForDir(d)
			dir.Changes, dir.SchedulePeriod = s.Changes, s.Period
			if dir.Changes == nil {
				dir.Changes = []Change{} // loaded, and empty
			}
		}
		if dir.Trace != "" {
			t, err := LoadTrace(dir.Trace)
			if err != nil {
				return dirs, err
			}
			dir.TraceMs = t.Ms
		}
		if key, why := dir.CheckLoaded(); why != "" {
			return dirs, &ProfileError{Input: p.String(), Field: d.String() + "." + key, Reason: why}
		}
		dirs[d] = dir
	}
	return dirs, nil
}

// ScheduledChanges lists the changes of p's schedules that take effect in
// [from, to), for a link whose schedule started at start
// (Link.Instruments().ScheduleStart), in time order.
func ScheduledChanges(p Profile, start, from, to time.Time) ([]AppliedChange, error) {
	dirs, err := p.load()
	if err != nil {
		return nil, err
	}
	return scheduledChanges(dirs, start, from, to), nil
}

// scheduledChanges is ScheduledChanges for loaded directions.
func scheduledChanges(dirs [2]Direction, start, from, to time.Time) []AppliedChange {
	var out []AppliedChange
	for _, d := range []Dir{Down, Up} {
		dir := dirs[d]
		if dir.Schedule == "" {
			continue
		}
		for k := 0; ; k++ {
			off := time.Duration(0)
			if dir.SchedulePeriod > 0 {
				off = time.Duration(k) * dir.SchedulePeriod
			} else if k > 0 {
				break
			}
			if start.Add(off).After(to) {
				break
			}
			for _, c := range dir.Changes {
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
