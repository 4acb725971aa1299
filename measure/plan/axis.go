package plan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// An Axis is one dimension of a matrix: its values, and what each does to
// a run. A matrix's plan is every combination of its axes' values, the
// first axis outermost (Matrix.AllAxes lists them, fullPlan combines
// them).
type Axis struct {
	// Name names the axis in messages and in matrix.json ("loss").
	Name string
	// Label names a count of its values in a command's opening line
	// ("losses", "session counts").
	Label string
	// Values are the axis's values as given, in the order they run.
	Values []string
	// Apply sets value i of Values on rc, a run the axes before this one
	// have set: what the value changes (the profile, the workload, ...)
	// and, in rc.Cell, what names the run's directory. It returns false
	// to leave the combination out: the loss axis runs a profile with a
	// loss model of its own once, at its first value.
	Apply func(rc *Run, i int) bool
}

// NewAxis is an axis of a matrix's own (Matrix.Axes): each run records
// its value in its cell (results.Cell.WithAxis), which adds "_name-value"
// to the cell's directory and ", name value" to its title, and then set,
// when not nil, changes what the value changes in the run (a workload or
// link setting). The name and values must pass results.CheckAxis, and each
// value is given once; Matrix.Validate says so when they do not.
func NewAxis(name string, values []string, set func(r *Run, value string)) Axis {
	return newAxis(name, name+" values", values, func(rc *Run, i int) {
		rc.Cell = rc.Cell.WithAxis(name, values[i])
		if set != nil {
			set(rc, values[i])
		}
	})
}

// newAxis is an axis that runs every value, apply setting value i on a run
// and naming it in rc.Cell: NewAxis's, and the built-in sessions and cap
// axes, which name their values in cell fields of their own.
func newAxis(name, label string, values []string, apply func(rc *Run, i int)) Axis {
	return Axis{Name: name, Label: label, Values: values, Apply: func(rc *Run, i int) bool {
		apply(rc, i)
		return true
	}}
}

// Names of the built-in axes, which a matrix's own axes may not take.
const (
	AxisProfile  = "profile"
	AxisCC       = "cc"
	AxisLoss     = "loss"
	axisSessions = "sessions"
	axisCap      = "cap"
	AxisRepeat   = "repeat"
	AxisArm      = "arm"
)

// AllAxes lists the matrix's axes in plan order: profile, congestion
// control, loss, sessions (when Sessions is set), cap (when
// BulkCapFractions is set), the matrix's own Axes, repeat and arm. Repeat
// and arm stay innermost, so that every cell's repeats run one after the
// other with their arms interleaved, and a shard's unit (all arms of one
// repeat of one cell) is a run of consecutive runs.
func (m *Matrix) AllAxes() []Axis {
	axes := []Axis{m.profileAxis(), m.ccAxis(), m.lossAxis()}
	axes = append(axes, m.sessionsAxis()...)
	axes = append(axes, m.capAxis()...)
	axes = append(axes, m.Axes...)
	return append(axes, m.repeatAxis(), m.armAxis())
}

// baseRun is what every run of the matrix shares before any axis sets it.
func (m *Matrix) baseRun() Run {
	return Run{Workload: m.Workload, Workdir: m.Workdir, Link: m.Link, Qlog: m.Qlog}
}

// profileAxis sets the run's profile (its loss is the loss axis's) and
// names the cell by it: the profile without loss, or the whole profile
// when it has a loss model of its own. Between two hosts it has one
// value, the path as found.
func (m *Matrix) profileAxis() Axis {
	if m.Remote != "" {
		return Axis{Name: AxisProfile, Label: "profiles", Values: []string{results.PathProfile}, Apply: func(rc *Run, _ int) bool {
			rc.Profile = shapedlink.Profile{}
			rc.Cell.Profile, rc.Cell.RTTms, rc.Cell.RateMbit = results.PathProfile, 0, 0
			return true
		}}
	}
	texts := make([]string, len(m.Profiles))
	for i, p := range m.Profiles {
		texts[i] = p.String()
	}
	return Axis{Name: AxisProfile, Label: "profiles", Values: texts, Apply: func(rc *Run, i int) bool {
		p := m.Profiles[i]
		rc.Profile = p
		rc.Cell.Profile = p.WithLoss(0).String()
		if p.HasLoss() {
			rc.Cell.Profile = p.String()
		}
		rc.Cell.RTTms = float64(p.RoundTrip()) / float64(time.Millisecond)
		rc.Cell.RateMbit = p.RateMbit
		return true
	}}
}

// ccAxis pins the tcp arm's congestion control; any but a Matched one
// makes a sensitivity cell.
func (m *Matrix) ccAxis() Axis {
	return Axis{Name: AxisCC, Label: "ccs", Values: m.CCs, Apply: func(rc *Run, i int) bool {
		rc.Cell.CC, rc.Cell.Sensitivity = m.CCs[i], !Matched(m.CCs[i])
		rc.Controller = ""
		if p, ok := m.Quicreno(); ok {
			rc.Controller = quicreno.Name + " " + p.String()
		}
		return true
	}}
}

// lossAxis gives the profile each loss level, except a profile with a
// loss model of its own, which runs once as it is, its cell's loss its
// mean (ownLoss). Between two hosts it has one value, 0.
func (m *Matrix) lossAxis() Axis {
	losses := m.Losses
	if m.Remote != "" {
		losses = []float64{0}
	}
	return Axis{Name: AxisLoss, Label: "losses", Values: floatTexts(losses), Apply: func(rc *Run, i int) bool {
		if rc.Profile.HasLoss() {
			rc.Cell.LossPct = ownLoss(rc.Profile)
			return i == 0
		}
		rc.Profile = rc.Profile.WithLoss(losses[i])
		rc.Cell.LossPct = losses[i]
		return true
	}}
}

// repeatAxis numbers the repeats from 1.
func (m *Matrix) repeatAxis() Axis {
	texts := make([]string, max(0, m.Repeats))
	for i := range texts {
		texts[i] = strconv.Itoa(i + 1)
	}
	return Axis{Name: AxisRepeat, Label: "repeats", Values: texts, Apply: func(rc *Run, i int) bool {
		rc.Repeat = i + 1
		return true
	}}
}

// armAxis runs each arm, in the order given, within every repeat.
func (m *Matrix) armAxis() Axis {
	texts := make([]string, len(m.Arms))
	for i, a := range m.Arms {
		texts[i] = string(a)
	}
	return Axis{Name: AxisArm, Label: "arms", Values: texts, Apply: func(rc *Run, i int) bool {
		rc.Arm = m.Arms[i]
		return true
	}}
}

// validArm says why name is not an arm the matrix can run, or nil. It is
// the one place arm names are checked.
func validArm(name string) error {
	_, err := measure.Lookup(name)
	return err
}

func floatTexts(fs []float64) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return out
}

// validateAxes checks the matrix's own axes: each has a name of its own
// (none of the built-in ones), at least one value, each once and each one
// a cell can record, and an Apply.
func (m *Matrix) validateAxes() []error {
	var errs []error
	builtin := []string{AxisProfile, AxisCC, AxisLoss, axisSessions, axisCap, AxisRepeat, AxisArm}
	var seen []string
	for _, a := range m.Axes {
		switch {
		case slices.Contains(builtin, a.Name):
			errs = append(errs, fmt.Errorf("axis %q is a built-in axis's name: give the matrix's own axis another", a.Name))
		case slices.Contains(seen, a.Name):
			errs = append(errs, fmt.Errorf("axis %q is given twice: give each axis once", a.Name))
		case a.Apply == nil:
			errs = append(errs, fmt.Errorf("axis %q has no Apply: make it with NewAxis", a.Name))
		case len(a.Values) == 0:
			errs = append(errs, fmt.Errorf("axis %q has no values: give at least one", a.Name))
		}
		seen = append(seen, a.Name)
		for i, v := range a.Values {
			if err := results.CheckAxis(a.Name, v); err != nil {
				errs = append(errs, err)
			} else if slices.Contains(a.Values[:i], v) {
				errs = append(errs, fmt.Errorf("axis %s: value %q is given twice: give each once", a.Name, v))
			}
		}
	}
	return errs
}

// distinctRuns checks that no two runs of the plan share a directory: an
// axis whose Apply does not name its values apart in the cell (NewAxis
// does) would have them overwrite each other.
func distinctRuns(plan []Run) error {
	seen := make(map[string]bool, len(plan))
	for _, rc := range plan {
		k := runKey(rc.Cell, string(rc.Arm), rc.Repeat)
		if seen[k] {
			return errors.New("two runs of the matrix share the directory " + k + ": an axis's values must be named apart in the cell (make the matrix's own axes with NewAxis)")
		}
		seen[k] = true
	}
	return nil
}
