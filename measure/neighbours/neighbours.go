package neighbours

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// display is the direction of the session's display, the one Jain's index
// and the cross goodput are taken in (shapedlink.CrossReport.Dir).
const display = "down"

// The reference every arm's cross goodput is read against: the tcp arm
// on reno in the same cell.
const (
	refArm = "tcp"
	refCC  = "reno"
)

// Table is the neighbours' figures of a set of runs, per cell and arm.
type Table struct {
	// Arms are ordered by cell (results.Less), then tcp and the other
	// arms by name.
	Arms []Arm `json:"arms"`
	// Skipped counts the runs without cross flows, left out.
	Skipped int `json:"skipped"`
}

// Arm is one arm of one cell: its runs that carried cross flows and the
// medians over those measured.
type Arm struct {
	Cell results.Cell `json:"cell"`
	Arm  string       `json:"arm"`
	// Runs counts the runs with cross flows, Failed those that failed
	// (not measured) and Measured those that gave figures.
	Runs     int `json:"runs"`
	Failed   int `json:"failed"`
	Measured int `json:"measured"`
	// SessionMbit, CrossMbit and Jain are medians over measured runs of
	// the session's display goodput (summed over sessions), the cross
	// flows' goodput in the display's direction (summed over flows) and
	// Jain's index over the sessions and those flows.
	SessionMbit float64 `json:"session_mbit"`
	CrossMbit   float64 `json:"cross_mbit"`
	Jain        float64 `json:"jain"`
	// SessionRetransmitPct is the median over the measured runs that
	// recorded it (SessionRetransmitRuns of them) of the session's own
	// retransmission rate; CrossRetransmitPct that of the cross flows'.
	SessionRetransmitPct  float64 `json:"session_retransmit_pct"`
	SessionRetransmitRuns int     `json:"session_retransmit_runs"`
	CrossRetransmitPct    float64 `json:"cross_retransmit_pct"`
	// Reference is the cell directory whose tcp arm on reno CrossRatio
	// reads against, "" when the matrix has none measured; CrossRatio is
	// CrossMbit over the reference's (0 without one).
	Reference  string  `json:"reference,omitempty"`
	CrossRatio float64 `json:"cross_ratio,omitempty"`
	// Figures are each run's own, in repeat order.
	Figures []Figures `json:"figures"`
}

// Figures are one run's neighbours' figures.
type Figures struct {
	Repeat int `json:"repeat"`
	// Failed is the run's own failure; Unmeasured why a run that did
	// not fail gave no figures. Either leaves the figures below empty.
	Failed     string `json:"failed,omitempty"`
	Unmeasured string `json:"unmeasured,omitempty"`
	// From and To are the measured window: SamplesStart plus the
	// warm-up, and SamplesStart plus the duration.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// SessionMbit is each session's display goodput after warm-up.
	SessionMbit []float64 `json:"session_mbit,omitempty"`
	// SessionRetransmitPct is the session's retransmitted packets over
	// its sent packets, server side, in percent; -1 when not recorded.
	SessionRetransmitPct float64 `json:"session_retransmit_pct"`
	// CrossMbit is the sum of Flows' goodput in the display's direction,
	// CrossRetransmitPct their retransmissions over their packets sent.
	CrossMbit          float64 `json:"cross_mbit"`
	CrossRetransmitPct float64 `json:"cross_retransmit_pct"`
	Jain               float64 `json:"jain"`
	Flows              []Flow  `json:"flows,omitempty"`
}

// Flow is one cross flow in one run.
type Flow struct {
	Dir   string `json:"dir"`
	Kind  string `json:"kind"`
	Index int    `json:"index"`
	CC    string `json:"cc,omitempty"`
	// Mbit is its goodput over the measured window; RetransmitPct its
	// sender's retransmissions over its packets, over its whole life.
	Mbit          float64 `json:"mbit"`
	RetransmitPct float64 `json:"retransmit_pct"`
	Retransmits   uint64  `json:"retransmits"`
	SentPackets   uint64  `json:"sent_packets"`
}

// Build reads the runs that carried cross flows into a Table; it returns
// nil when none did. A record whose transport state or cross flows do not
// read is an error naming the run.
func Build(runs []results.Run) (*Table, error) {
	t := &Table{}
	type key struct{ dir, arm string }
	byKey := map[key]*Arm{}
	for _, r := range runs {
		if len(r.Link.Cross) == 0 {
			t.Skipped++
			continue
		}
		f, err := Measure(r)
		if err != nil {
			return nil, fmt.Errorf("neighbours: %s/%s/r%d: %w", r.Cell.Dir(), r.Arm, r.Repeat, err)
		}
		k := key{r.Cell.Dir(), r.Arm}
		a := byKey[k]
		if a == nil {
			a = &Arm{Cell: r.Cell, Arm: r.Arm}
			byKey[k] = a
		}
		a.Figures = append(a.Figures, f)
	}
	if len(byKey) == 0 {
		return nil, nil
	}
	for _, a := range byKey {
		a.summarise()
		t.Arms = append(t.Arms, *a)
	}
	slices.SortFunc(t.Arms, func(a, b Arm) int {
		switch {
		case results.Less(a.Cell, b.Cell):
			return -1
		case results.Less(b.Cell, a.Cell):
			return 1
		}
		return cmp.Or(cmp.Compare(a.Cell.Dir(), b.Cell.Dir()), cmp.Compare(armRank(a.Arm), armRank(b.Arm)), cmp.Compare(a.Arm, b.Arm))
	})
	t.reference()
	return t, nil
}

// armRank puts the reference arm first.
func armRank(arm string) int {
	if arm == refArm {
		return 0
	}
	return 1
}

// summarise fills the arm's counts and medians from its Figures.
func (a *Arm) summarise() {
	slices.SortFunc(a.Figures, func(x, y Figures) int { return cmp.Compare(x.Repeat, y.Repeat) })
	var sess, cross, jain, sret, cret []float64
	a.Runs = len(a.Figures)
	for _, f := range a.Figures {
		switch {
		case f.Failed != "":
			a.Failed++
			continue
		case f.Unmeasured != "":
			continue
		}
		a.Measured++
		var s float64
		for _, m := range f.SessionMbit {
			s += m
		}
		sess, cross, jain = append(sess, s), append(cross, f.CrossMbit), append(jain, f.Jain)
		cret = append(cret, f.CrossRetransmitPct)
		if f.SessionRetransmitPct >= 0 {
			sret = append(sret, f.SessionRetransmitPct)
		}
	}
	a.SessionMbit, a.CrossMbit, a.Jain = median(sess), median(cross), median(jain)
	a.SessionRetransmitPct, a.SessionRetransmitRuns = median(sret), len(sret)
	a.CrossRetransmitPct = median(cret)
}

// median is stats.Median, 0 for no values.
func median(xs []float64) float64 {
	m, err := stats.Median(xs)
	if err != nil {
		return 0
	}
	return m
}

// referenceCell is the cell whose tcp arm c's arms are read against: c
// on reno, as the headline (not a sensitivity) cell.
func referenceCell(c results.Cell) results.Cell {
	c.CC, c.Sensitivity = refCC, false
	return c
}

// reference sets each arm's Reference and CrossRatio.
func (t *Table) reference() {
	ref := map[string]*Arm{}
	for i := range t.Arms {
		if a := &t.Arms[i]; a.Arm == refArm && a.Cell.CC == refCC && a.Measured > 0 {
			ref[a.Cell.Dir()] = a
		}
	}
	for i := range t.Arms {
		a := &t.Arms[i]
		r := ref[referenceCell(a.Cell).Dir()]
		if r == nil || a.Measured == 0 {
			continue
		}
		a.Reference = r.Cell.Dir()
		if r.CrossMbit > 0 {
			a.CrossRatio = a.CrossMbit / r.CrossMbit
		}
	}
}

// Measure is one run's figures. A failed run gives its failure, a run
// whose window or flows cannot be read a reason in Unmeasured; the error
// is for a record that does not read (its server's transport state).
func Measure(r results.Run) (Figures, error) {
	f := Figures{Repeat: r.Repeat, SessionRetransmitPct: -1}
	if r.Failed != "" {
		f.Failed = r.Failed
		return f, nil
	}
	for _, c := range r.Link.Cross {
		f.Flows = append(f.Flows, Flow{Dir: c.Dir, Kind: c.Kind, Index: c.Index, CC: c.CC,
			RetransmitPct: c.RetransmitPct(), Retransmits: c.Retransmits, SentPackets: c.SentPackets})
	}
	pct, err := sessionRetransmitPct(r.Server)
	if err != nil {
		return f, fmt.Errorf("server transport state: %w", err)
	}
	f.SessionRetransmitPct = pct
	if why := f.measure(r); why != "" {
		f.Unmeasured = why
		f.SessionMbit, f.CrossMbit, f.CrossRetransmitPct, f.Jain = nil, 0, 0, 0
	}
	return f, nil
}

// measure fills the window, the goodputs and Jain's index, or says why not.
func (f *Figures) measure(r results.Run) string {
	if r.SamplesStart.IsZero() {
		return "the run recorded no samples_start, so its measured window is not known"
	}
	f.From, f.To = r.SamplesStart.Add(r.Warmup), r.SamplesStart.Add(r.Duration)
	shares := []float64{}
	for _, s := range r.SessionResults() {
		f.SessionMbit = append(f.SessionMbit, s.ThroughputMbit)
		shares = append(shares, s.ThroughputMbit)
	}
	var sent, retrans uint64
	shown := 0
	for i, c := range r.Link.Cross {
		name := fmt.Sprintf("cross flow %s %s #%d", c.Dir, c.Kind, c.Index)
		if c.Err != "" {
			return name + " stopped early: " + c.Err
		}
		mbit, bins, err := windowMbit(c, f.From, f.To)
		if err != nil {
			return name + ": " + err.Error()
		}
		if bins == 0 {
			return name + " has no 100 ms bin wholly inside the measured window"
		}
		f.Flows[i].Mbit = mbit
		if c.Dir != display {
			continue
		}
		shown++
		f.CrossMbit += mbit
		shares = append(shares, mbit)
		sent, retrans = sent+c.SentPackets, retrans+c.Retransmits
	}
	if shown == 0 {
		return "no cross flow in the display's direction (" + display + ")"
	}
	if sent > 0 {
		f.CrossRetransmitPct = 100 * float64(retrans) / float64(sent)
	}
	j, err := stats.JainIndex(shares)
	if err != nil {
		return err.Error()
	}
	f.Jain = j
	return ""
}

// windowMbit is c's goodput over the bins that lie wholly within [from,
// to], in Mbit/s (CrossReport.GoodputMbit), and how many bins that was.
func windowMbit(c shapedlink.CrossReport, from, to time.Time) (float64, int, error) {
	if c.BinMs <= 0 {
		return 0, 0, fmt.Errorf("bin width %d ms", c.BinMs)
	}
	bin := time.Duration(c.BinMs) * time.Millisecond
	n := 0
	for i, b := range c.Bins {
		start := c.Started.Add(time.Duration(i) * bin)
		if start.Before(from) || start.Add(bin).After(to) {
			continue
		}
		if b < 0 {
			return 0, 0, fmt.Errorf("bin %d holds %d bytes", i, b)
		}
		n++
	}
	return c.GoodputMbit(from, to), n, nil
}

// sessionRetransmitPct is the retransmitted over the sent packets of every
// connection in the server's transport state, in percent: TCP_INFO's
// total_retrans over segs_out, or quic-go's packets lost over sent. It is
// -1 when the state is absent or counts no packets sent.
func sessionRetransmitPct(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return -1, nil
	}
	var st transport.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return 0, err
	}
	var sent, retrans uint64
	for _, c := range st.TCP {
		info := c.Info
		if c.InfoError != "" {
			if len(c.Series) == 0 {
				return -1, nil // one connection's count is missing
			}
			info = c.Series[len(c.Series)-1]
		}
		sent, retrans = sent+uint64(info.SegsOut), retrans+uint64(info.Retransmits)
	}
	for _, c := range st.QUIC {
		sent, retrans = sent+c.Stats.PacketsSent, retrans+c.Stats.PacketsLost
	}
	if sent == 0 {
		return -1, nil
	}
	return 100 * float64(retrans) / float64(sent), nil
}
