package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/gsocheck"
)

// Markdown builds a report from runs and writes it to w as markdown.
func Markdown(w io.Writer, runs []results.Run, opts Options) error {
	rep, err := Build(runs, opts)
	if err != nil {
		return err
	}
	return rep.WriteMarkdown(w)
}

// WriteMarkdown writes the report as markdown: tables a transport engineer
// can paste into a write-up, milliseconds with one decimal.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := &md{w: bw}
	r.mdHeader(m)
	for _, g := range r.groups() {
		r.mdGroup(m, g)
	}
	r.mdSessions(m)
	r.mdCapped(m)
	r.mdThroughput(m)
	r.mdCPU(m)
	r.mdConnect(m)
	r.mdGSO(m)
	r.mdWarnings(m)
	r.mdHost(m)
	return bw.Flush()
}

type md struct{ w io.Writer }

func (m *md) p(format string, args ...any) { fmt.Fprintf(m.w, format+"\n", args...) }

func (m *md) row(cols ...string) {
	for i, c := range cols {
		cols[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	fmt.Fprintf(m.w, "| %s |\n", strings.Join(cols, " | "))
}

func (m *md) header(cols ...string) {
	m.row(cols...)
	seps := make([]string, len(cols))
	for i := range seps {
		seps[i] = "---"
	}
	m.row(seps...)
}

// group is the cells that share a congestion-control setting.
type group struct {
	cc          string
	sensitivity bool
	cells       []*CellReport
}

func (r *Report) groups() []group {
	var gs []group
	for i := range r.Cells {
		c := &r.Cells[i]
		if n := len(gs); n > 0 && gs[n-1].cc == c.Cell.CC && gs[n-1].sensitivity == c.Cell.Sensitivity {
			gs[n-1].cells = append(gs[n-1].cells, c)
			continue
		}
		gs = append(gs, group{cc: c.Cell.CC, sensitivity: c.Cell.Sensitivity, cells: []*CellReport{c}})
	}
	return gs
}

func (g group) title() string {
	if g.sensitivity {
		return fmt.Sprintf("Sensitivity cells: kernel TCP %s (not the headline)", g.cc)
	}
	return fmt.Sprintf("Interactive round trip, headline: kernel TCP %s", g.cc)
}

func (r *Report) mdHeader(m *md) {
	m.p("# quicbench summary")
	m.p("")
	src := ""
	if r.Source != "" {
		src = fmt.Sprintf(" from `%s`", r.Source)
	}
	m.p("%s%s in %s.", plural(r.Runs, "run"), src, plural(len(r.Cells), "cell"))
	switch {
	case r.WarmupOverridden:
		m.p("The first %s of every run is discarded as warm-up (overridden when summarising, not what the runs recorded).", seconds(r.WarmupMs))
	case r.WarmupVaries:
		m.p("Runs recorded different warm-ups; each arm's is in the JSON output (-json).")
	default:
		m.p("The first %s of every run is discarded as warm-up, as the runs recorded.", seconds(r.WarmupMs))
	}
	m.p("")
	m.p("All times are milliseconds. A cell's p50, p95 and p99 are the medians over repeats of each repeat's own nearest-rank percentile, never a percentile of pooled samples. The p95 spread is the highest minus the lowest repeat p95 in that cell and arm; the threshold for a reading is the wider of the two arms' spreads, and a delta that does not exceed it is unresolved.")
	m.p("")
}

func (r *Report) mdGroup(m *md, g group) {
	m.p("## %s", g.title())
	m.p("")
	if g.sensitivity {
		m.p("These cells pin kernel TCP to %s against quic-go's own controller: a sensitivity arm, to be read beside the headline and never instead of it.", g.cc)
	} else {
		m.p("Matched congestion control: kernel TCP pinned to %s.", g.cc)
	}
	if cc := inForce(g); cc != "" {
		m.p("Congestion control in force, as the runs recorded it: %s.", cc)
	}
	m.p("")
	// One table per profile.
	for i := 0; i < len(g.cells); {
		j := i
		for j < len(g.cells) && CellTitle(g.cells[j].Cell) == CellTitle(g.cells[i].Cell) {
			j++
		}
		m.p("### %s", CellTitle(g.cells[i].Cell))
		m.p("")
		if g.cells[i].Cell.Sessions > 1 {
			m.p("These rows are session 0's alone, one of %d sharing the link; every session is in the sessions section below.", g.cells[i].Cell.Sessions)
			m.p("")
		}
		m.header("loss", "arm", "p50", "p95", "p99", "p95 spread", "p95 range", "samples/run", "timeouts", "repeats")
		for _, c := range g.cells[i:j] {
			for _, a := range c.Arms {
				reps := fmt.Sprintf("%d/%d", a.Measured, a.Runs)
				if a.Measured == 0 {
					m.row(pct(c.Cell.LossPct), a.Arm, "-", "-", "-", "-", "-", "-", strconv.Itoa(a.Timeouts), reps)
					continue
				}
				m.row(pct(c.Cell.LossPct), a.Arm, f1(a.P50Ms), f1(a.P95Ms), f1(a.P99Ms), f1(a.SpreadMs),
					f1(a.P95MinMs)+"-"+f1(a.P95MaxMs), fmt.Sprintf("%.0f", a.SamplesPerRun), strconv.Itoa(a.Timeouts), reps)
			}
		}
		m.p("")
		i = j
	}
	// One reading table per pair of arms.
	for _, pr := range groupPairs(g) {
		m.p("### Reading them: %s against %s", ArmLabel(pr[1]), ArmLabel(pr[0]))
		m.p("")
		m.p("Delta is %s's median p95 minus %s's (positive: %s slower). Beside the spread rule, and never instead of it: an order-statistic confidence interval for each arm's median p95, and a two-sided Mann-Whitney U test between the arms' repeat p95s.", pr[1], pr[0], pr[1])
		m.p("")
		m.header("profile", "loss", "delta", "threshold", "resolves as", pr[0]+" median p95 interval", pr[1]+" median p95 interval", "U-test p")
		notes := &footnotes{}
		for _, c := range g.cells {
			for _, cp := range c.Comparisons {
				if cp.A != pr[0] || cp.B != pr[1] {
					continue
				}
				if cp.Error != "" {
					m.row(CellTitle(c.Cell), pct(c.Cell.LossPct), "-", "-", "not compared: "+cp.Error, "-", "-", "-")
					continue
				}
				verdict := cp.Reading
				// The ordinary reason (|delta| within the threshold) is the
				// table itself; a verdict forced by too few repeats is not.
				if cp.Reason != "" && (c.Arm(cp.A).Measured < 2 || c.Arm(cp.B).Measured < 2) {
					verdict += notes.mark(cp.Reason)
				}
				m.row(CellTitle(c.Cell), pct(c.Cell.LossPct), fmt.Sprintf("%+.1f", cp.DeltaMs), f1(cp.ThresholdMs), verdict,
					interval(c.Arm(cp.A).P95Interval, notes), interval(c.Arm(cp.B).P95Interval, notes), utest(cp, notes))
			}
		}
		notes.write(m)
		m.p("")
	}
}

// inForce lists the congestion control each arm recorded across a group.
func inForce(g group) string {
	var parts []string
	var arms []string
	seen := map[string][]string{}
	for _, c := range g.cells {
		for _, a := range c.Arms {
			if _, ok := seen[a.Arm]; !ok {
				arms = append(arms, a.Arm)
				seen[a.Arm] = []string{}
			}
			for _, cc := range a.CongestionControl {
				if !contains(seen[a.Arm], cc) {
					seen[a.Arm] = append(seen[a.Arm], cc)
				}
			}
		}
	}
	for _, a := range arms {
		if len(seen[a]) > 0 {
			parts = append(parts, a+": "+strings.Join(seen[a], ", "))
		}
	}
	return strings.Join(parts, "; ")
}

func groupPairs(g group) [][2]string {
	var out [][2]string
	for _, c := range g.cells {
		for _, cp := range c.Comparisons {
			p := [2]string{cp.A, cp.B}
			if !containsPair(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func containsPair(ps [][2]string, p [2]string) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// footnotes collects notes under a table, each marked once.
type footnotes struct{ notes []string }

// marks are footnote markers that mean nothing else to a markdown renderer
// (an asterisk would start emphasis or a list).
var marks = []string{"†", "‡", "§", "¶", "‖"}

func (f *footnotes) mark(note string) string {
	for i, n := range f.notes {
		if n == note {
			return markFor(i)
		}
	}
	f.notes = append(f.notes, note)
	return markFor(len(f.notes) - 1)
}

func markFor(i int) string {
	if i < len(marks) {
		return marks[i]
	}
	return fmt.Sprintf("[%d]", i+1)
}

func (f *footnotes) write(m *md) {
	if len(f.notes) == 0 {
		return
	}
	m.p("")
	for i, n := range f.notes {
		m.p("%s %s.", markFor(i), strings.TrimSuffix(n, "."))
		if i < len(f.notes)-1 {
			m.p("")
		}
	}
}

func interval(iv Interval, notes *footnotes) string {
	s := fmt.Sprintf("%s-%s (%.1f%%)", f1(iv.LoMs), f1(iv.HiMs), 100*iv.Level)
	if !iv.Enough && iv.Note != "" {
		s += notes.mark(iv.Note)
	}
	return s
}

func utest(cp Comparison, notes *footnotes) string {
	s := pvalue(cp.U.P)
	if !cp.U.Enough && cp.U.Note != "" {
		s += notes.mark(cp.U.Note)
	}
	return s
}

func pvalue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

func (r *Report) mdThroughput(m *md) {
	m.p("## Throughput of the saturating channel")
	m.p("")
	m.p("Median over measured repeats, Mbit/s, with the range across repeats in brackets.")
	m.p("")
	arms := r.allArms()
	m.header(append([]string{"profile", "loss", "cc"}, arms...)...)
	for _, c := range r.Cells {
		cols := []string{CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell)}
		for _, name := range arms {
			a := c.Arm(name)
			switch {
			case a == nil:
				cols = append(cols, "")
			case a.Measured == 0:
				cols = append(cols, "-")
			default:
				t := a.ThroughputMbit
				cols = append(cols, fmt.Sprintf("%.2f (%.2f-%.2f)", t.Median, t.Min, t.Max))
			}
		}
		m.row(cols...)
	}
	m.p("")
}

func ccLabel(c results.Cell) string {
	if c.Sensitivity {
		return c.CC + " (sensitivity)"
	}
	return c.CC
}

func (r *Report) allArms() []string {
	var arms []string
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			if !contains(arms, a.Arm) {
				arms = append(arms, a.Arm)
			}
		}
	}
	sortArms(arms)
	return arms
}

func sortArms(arms []string) {
	for i := 1; i < len(arms); i++ {
		for j := i; j > 0 && compareArms(arms[j-1], arms[j]) > 0; j-- {
			arms[j-1], arms[j] = arms[j], arms[j-1]
		}
	}
}

func (r *Report) mdConnect(m *md) {
	m.p("## Connect time")
	m.p("")
	if len(r.ConnectTime) == 0 {
		m.p("No run recorded a connect time.")
		m.p("")
		return
	}
	m.p("Time to open every channel, per profile and arm, pooled over loss levels and congestion-control settings: median, range in brackets, and the number of connects.")
	m.p("")
	var arms []string
	for _, row := range r.ConnectTime {
		if !contains(arms, row.Arm) {
			arms = append(arms, row.Arm)
		}
	}
	sortArms(arms)
	m.header(append([]string{"profile"}, arms...)...)
	for i := 0; i < len(r.ConnectTime); {
		j := i
		cols := []string{r.ConnectTime[i].Title}
		byArm := map[string]ConnectRow{}
		for j < len(r.ConnectTime) && r.ConnectTime[j].Title == r.ConnectTime[i].Title {
			byArm[r.ConnectTime[j].Arm] = r.ConnectTime[j]
			j++
		}
		for _, a := range arms {
			if row, ok := byArm[a]; ok {
				cols = append(cols, fmt.Sprintf("%s ms (%s-%s), n=%d", f1(row.Ms.Median), f1(row.Ms.Min), f1(row.Ms.Max), row.Ms.N))
			} else {
				cols = append(cols, "")
			}
		}
		m.row(cols...)
		i = j
	}
	m.p("")
}

func (r *Report) mdGSO(m *md) {
	m.p("## Was segmentation offload off?")
	m.p("")
	m.p("Per QUIC cell, from the server's egress queue (bytes per queue slot over samples with at least two packets queued) and/or the egress-hook counters. The verdict is off only if every run said off; pooled mean is the range of the runs' pooled means; max is the largest bytes per slot any sample held. Off means no sample held more bytes than (packets + 1) x the expected size (a torn read of the packet and byte gauges cannot reach that) and no more than 2%% of samples held more than packets x the expected size, so with offload off the max can sit a little above the expected size.")
	m.p("")
	rows := 0
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			if !IsQUIC(a.Arm) {
				continue
			}
			if rows == 0 {
				m.header("profile", "loss", "cc", "arm", "evidence", "verdict", "pooled mean", "max", "expected", "samples used")
			}
			rows++
			if len(a.GSO) == 0 {
				m.row(CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell), a.Arm, "none recorded", "not verified", "-", "-", "-", "-")
				continue
			}
			for _, g := range a.GSO {
				verdict := fmt.Sprintf("%s (%d/%d runs)", g.Verdict, countFor(g), g.Runs)
				mean := fmt.Sprintf("%.1f", g.PooledMeanMin)
				if g.PooledMeanMax != g.PooledMeanMin {
					mean += fmt.Sprintf("-%.1f", g.PooledMeanMax)
				}
				maxCol, used := "-", ""
				if g.Source == "queue" {
					maxCol = fmt.Sprintf("%.0f", g.Max)
					used = fmt.Sprintf("%d of %d samples", g.Used, g.Total)
				} else {
					used = fmt.Sprintf("%d packets, %d oversize", g.Used, g.Oversize)
				}
				m.row(CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell), a.Arm, g.Source, verdict, mean, maxCol, strconv.Itoa(g.Expected), used)
			}
		}
	}
	if rows == 0 {
		m.p("No QUIC arm in these runs.")
	}
	m.p("")
}

func countFor(g GSOSummary) int {
	switch g.Verdict {
	case gsocheck.Off:
		return g.Off
	case gsocheck.On:
		return g.On
	}
	return g.Inconclusive
}

func (r *Report) mdWarnings(m *md) {
	m.p("## Warnings")
	m.p("")
	m.p("Every cell and arm with a timed-out exchange, a repeat that could not be measured, offload not verified off on a QUIC arm, or anything else that stops a reading being taken at face value.")
	m.p("")
	if len(r.Warnings) == 0 {
		m.p("None: no timeouts, no unmeasured repeats, offload verified off on every QUIC arm.")
		m.p("")
		return
	}
	for _, w := range r.Warnings {
		where := "all runs"
		if w.Cell != "" {
			where = w.Cell
			if w.Arm != "" {
				where += ", " + w.Arm
			}
		}
		m.p("- **%s** (%s): %s", where, w.Kind, w.Detail)
	}
	m.p("")
}

func (r *Report) mdHost(m *md) {
	m.p("## Host state and link")
	m.p("")
	kv, err := flattenJSON(r.Host)
	switch {
	case len(r.Host) == 0:
		m.p("The runs recorded no host state.")
	case err != nil:
		m.p("The first run's host state could not be read: %v.", err)
	default:
		m.header("host", "value")
		for _, p := range kv {
			if p[0] == "applied" && len(r.Link.Applied) > 0 {
				continue // the link as applied is printed below
			}
			m.row("`"+p[0]+"`", p[1])
		}
	}
	m.p("")
	l := r.Link
	line := fmt.Sprintf("Link backend: %s; queue limit %d packets", orNone(l.Backend), l.Limit)
	if l.Seed != 0 {
		line += fmt.Sprintf("; loss seed %d", l.Seed)
	}
	m.p("%s. As applied for %s:", line, r.LinkFrom)
	m.p("")
	m.p("```")
	if len(l.Applied) == 0 {
		m.p("(not recorded)")
	}
	for _, a := range l.Applied {
		m.p("%s", a)
	}
	m.p("```")
}

func orNone(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

// flattenJSON turns a JSON object into dotted key/value pairs in document
// order; arrays of scalars become space-separated values.
func flattenJSON(raw json.RawMessage) ([][2]string, error) {
	var out [][2]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					name := fmt.Sprint(k)
					if prefix != "" {
						name = prefix + "." + name
					}
					if err := walk(name); err != nil {
						return err
					}
				}
				_, err := dec.Token() // '}'
				return err
			case '[':
				var vals []string
				for dec.More() {
					var el json.RawMessage
					if err := dec.Decode(&el); err != nil {
						return err
					}
					if t := bytes.TrimSpace(el); len(t) > 0 && t[0] == '{' {
						// An object inside a list: one k=v line, in order.
						kv, err := flattenJSON(el)
						if err != nil {
							return err
						}
						var parts []string
						for _, p := range kv {
							parts = append(parts, p[0]+"="+p[1])
						}
						vals = append(vals, "("+strings.Join(parts, " ")+")")
						continue
					}
					var v any
					if err := json.Unmarshal(el, &v); err != nil {
						return err
					}
					if s, ok := v.(string); ok {
						vals = append(vals, s)
					} else {
						vals = append(vals, string(bytes.TrimSpace(el)))
					}
				}
				out = append(out, [2]string{prefix, strings.Join(vals, " ")})
				_, err := dec.Token() // ']'
				return err
			}
		case nil:
			out = append(out, [2]string{prefix, "(null)"})
		default:
			out = append(out, [2]string{prefix, fmt.Sprint(t)})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return out, nil
}

// f1 is one decimal, the precision every millisecond figure is printed at.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func pct(loss float64) string { return strconv.FormatFloat(loss, 'f', -1, 64) + "%" }

func seconds(msv float64) string {
	return strconv.FormatFloat(msv/1000, 'f', -1, 64) + " s"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
