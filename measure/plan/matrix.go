package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// Matrix is profiles x congestion-control settings x losses (x sessions x
// caps x the matrix's own axes) x repeats, with every arm run in every
// cell, interleaved (tcp, quic, tcp, quic, ...) so that drift on the
// machine hits every arm alike. The fields below are its axes' values;
// AllAxes lists the axes themselves, in plan order. What a work directory
// records of it (matrix.json) is matrixRecord.
type Matrix struct {
	// Profiles are link profiles; their own loss, if any, is replaced by
	// each of Losses.
	Profiles []shapedlink.Profile
	Losses   []float64
	// CCs are the kernel TCP congestion controls for the tcp arm. "reno"
	// is the headline (matched with quic-go's NewReno); any other is a
	// sensitivity cell.
	CCs []string
	// Controller is the settings quicreno (the BPF controller that does
	// what quic-go's does) is loaded with for the run when CCs name it;
	// the zero value is quicreno.Defaults().
	Controller quicreno.Params
	// Arms are the arms every repeat runs, in order, by the names they
	// are registered under (measure.Register); the summary reads each
	// against tcp.
	Arms []measure.Arm
	// Repeats is how many times each cell runs its arms.
	Repeats int
	// Workload is the spicelike configuration of every run.
	Workload spicelike.Config
	Workdir  string
	// Link chooses the backend, the privilege mode and the offload mode
	// (Options.Offload) of every link the matrix builds.
	Link shapedlink.Options
	Qlog bool
	// Sessions, when set, makes each listed count of sessions a cell of
	// its own: that many sessions of the workload run at once over the one
	// link, each with its own channels (results.Cell.Sessions). Empty means
	// one session and leaves cells unmarked, as the headline.
	Sessions []int
	// BulkCapFractions, when set, makes each listed cap a cell of its own:
	// the saturating channel is paced to that fraction of the profile's
	// rate, in bits per second of payload (spicelike's Config.BulkRateCap).
	// 0 in the list is an uncapped cell named as the headline's. Empty
	// means uncapped, as Workload says.
	BulkCapFractions []float64
	// Axes are the matrix's own axes (NewAxis), after the built-in cell
	// axes and before repeats and arms: each value a cell of its own,
	// recorded in results.Cell.Axes. matrix.json records their names and
	// values.
	Axes []Axis
	// Shard, when set, makes Plan keep only this shard's share of the
	// matrix (see Shard); the zero value is the whole matrix.
	Shard Shard
	// Remote, when set, is the address (HOST:PORT) of the two-host daemon
	// the matrix runs against, over the path as found: Profiles, Losses
	// and Link must then be empty, and the matrix has one cell per
	// congestion control and session count, named results.PathProfile.
	Remote string
}

// Quicreno is quicreno's settings for this matrix, and whether a cell or
// an arm runs it.
func (m *Matrix) Quicreno() (quicreno.Params, bool) {
	return m.controller(), m.needsController()
}

// controller is quicreno's settings for this matrix.
func (m *Matrix) controller() quicreno.Params {
	if m.Controller == (quicreno.Params{}) {
		return quicreno.Defaults()
	}
	return m.Controller
}

// checkCC says why the tcp arm could not run congestion control cc here:
// quicreno cannot be loaded (or not between two hosts), or a kernel
// controller is not available.
func (m *Matrix) checkCC(cc string) error {
	switch {
	case cc == quicreno.Name && m.Remote != "":
		return fmt.Errorf("%s runs on one host only for now: the two-host daemon does not load it", quicreno.Name)
	case cc == quicreno.Name:
		if err := quicreno.CheckLoad(); err != nil {
			return err
		}
		return m.controller().Validate()
	}
	return transport.CheckCongestionControl(cc)
}

// needsController reports whether a cell or an arm runs quicreno.
func (m *Matrix) needsController() bool {
	if quicreno.Needed(m.CCs) {
		return true
	}
	for _, a := range m.Arms {
		if cc, ok := a.PinnedCC(); ok && cc == quicreno.Name {
			return true
		}
	}
	return false
}

// Matched reports whether cc is a headline cell's controller: MatchedCC,
// or quicreno, which does what quic-go's controller does.
func Matched(cc string) bool { return cc == MatchedCC || cc == quicreno.Name }

// MatchedCC is the kernel TCP algorithm that matches quic-go's congestion
// control (NewReno, fixed): the headline pins it.
const MatchedCC = "reno"

// Validate checks the matrix before anything runs: every congestion control
// must be available (no silent fallback), every arm known, the workload
// valid.
func (m *Matrix) Validate() error {
	var errs []error
	if m.Remote != "" {
		errs = append(errs, m.validateRemote()...)
	} else {
		if len(m.Profiles) == 0 {
			errs = append(errs, errors.New("no profiles: give at least one, e.g. -profiles \"80:10\""))
		}
		if len(m.Losses) == 0 {
			errs = append(errs, errors.New("no loss levels: give at least one, e.g. -losses \"0 1 2\""))
		}
	}
	for _, l := range m.Losses {
		if l < 0 || l >= 100 {
			errs = append(errs, fmt.Errorf("loss %v%% is outside [0, 100)", l))
		}
	}
	if len(m.CCs) == 0 {
		errs = append(errs, errors.New("no congestion control: give at least one, e.g. -ccs reno"))
	}
	for _, cc := range m.CCs {
		if err := m.checkCC(cc); err != nil {
			errs = append(errs, err)
		}
	}
	if len(m.Arms) == 0 {
		errs = append(errs, errors.New("no arms: give at least one, e.g. -arms \"tcp quic\""))
	}
	for _, a := range m.Arms {
		if err := validArm(string(a)); err != nil {
			errs = append(errs, err)
			continue
		}
		// An arm's own controller, unless a cell's already checks it.
		if cc, ok := a.PinnedCC(); ok && !slices.Contains(m.CCs, cc) {
			if err := m.checkCC(cc); err != nil {
				errs = append(errs, fmt.Errorf("arm %s: %w", a, err))
			}
		}
	}
	errs = append(errs, m.validateAxes()...)
	if m.Repeats < 1 || m.Repeats > maxRepeats {
		errs = append(errs, fmt.Errorf("repeats is %d: give 1 to %d (5 for a verdict with a spread)", m.Repeats, maxRepeats))
	} else if n := m.size(); n > maxRuns {
		errs = append(errs, fmt.Errorf("the matrix has %d runs, more than %d: give fewer profiles, losses, ccs, arms, sessions, caps or repeats", n, maxRuns))
	}
	if err := m.Workload.Validate(); err != nil {
		errs = append(errs, err)
	}
	if m.Workdir == "" {
		errs = append(errs, errors.New("no work directory: give -workdir or WORKDIR"))
	}
	if o := m.Link.Offload; o != shapedlink.OffloadWire && o != shapedlink.OffloadKeep {
		errs = append(errs, fmt.Errorf("offload mode %q: give shapedlink.OffloadWire (wire-sized packets, the default) or shapedlink.OffloadKeep", o))
	}
	errs = append(errs, m.sessionsErrors()...)
	errs = append(errs, m.capErrors()...)
	if err := m.Shard.validate(); err != nil {
		errs = append(errs, err)
	} else if len(errs) == 0 {
		if err := m.shardFits(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && len(m.Axes) > 0 {
		if err := distinctRuns(m.fullPlan()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// size is the number of runs the matrix plans (an upper bound: a profile
// with a loss model of its own runs at one loss level), saturating at
// maxRuns+1 so that it cannot overflow. Repeats must be at most
// maxRepeats.
func (m *Matrix) size() int {
	n := 1
	for _, a := range m.AllAxes() {
		k := len(a.Values)
		if k > 0 && n > maxRuns/k {
			return maxRuns + 1
		}
		n *= k
	}
	return n
}

// Plan lists the runs this process makes, in the order it makes them: the
// whole matrix (fullPlan), or with Shard set that shard's share of it.
func (m *Matrix) Plan() []Run { return m.Shard.share(m.fullPlan()) }

// fullPlan lists the whole matrix's runs in order, whatever Shard says:
// every combination of the axes' values (AllAxes), the first axis
// outermost, so cell by cell, repeat by repeat, every arm within a repeat.
func (m *Matrix) fullPlan() []Run {
	plan := []Run{m.baseRun()}
	for _, a := range m.AllAxes() {
		next := make([]Run, 0, len(plan)*len(a.Values))
		for _, rc := range plan {
			for i := range a.Values {
				r := rc
				if a.Apply(&r, i) {
					next = append(next, r)
				}
			}
		}
		plan = next
	}
	return plan
}

// ownLoss is the loss a profile with its own loss model carries, for a
// cell's LossPct: the mean over its two directions of each direction's
// long-run loss (a Gilbert-Elliott or 4-state chain's stationary mean), in
// percent, rounded to 0.001.
func ownLoss(p shapedlink.Profile) float64 {
	var sum float64
	for _, d := range []shapedlink.Dir{shapedlink.Down, shapedlink.Up} {
		dir := p.Direction(d)
		switch {
		case dir.HasGE:
			sum += dir.GE.MeanLoss()
		case dir.HasFourState:
			sum += dir.FourState.MeanLoss()
		default:
			sum += dir.LossPct
		}
	}
	return math.Round(sum/2*1000) / 1000
}

// matrixFile records what a work directory was made for.
const matrixFile = "matrix.json"

// ErrWorkdir: the work directory cannot be used for this matrix (it
// holds another matrix, another command holds it, or it cannot be made).
// Nothing was run.
var ErrWorkdir = errors.New("work directory refused")

// MaxDuration bounds a run's length (and its warm-up).
const MaxDuration = 24 * time.Hour

// Bounds on a matrix, so that a typo cannot plan a run that outlives the
// machine or exhausts its memory.
const (
	maxRepeats = 1000
	maxRuns    = 100000
)
