package summary

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/stats"
)

// series is one reading's runs of one arm in one cell, in repeat order.
type series struct {
	cell    results.Cell
	reading string
	arm     measure.Arm
	runs    []liveRun
}

// liveRun is a run with its live.json: Rec for a live run whose record
// reads, else Err (a replay or synthetic run has none).
type liveRun = results.Extra[spicelive.LiveRecord]

// loadSeries reads every reading's runs of the work directory.
func loadSeries(c spicelive.Config) (map[string]map[string]map[measure.Arm]*series, []results.Cell, error) {
	out := map[string]map[string]map[measure.Arm]*series{} // cell dir → reading → arm
	var cells []results.Cell
	readings := c.Readings
	if c.Control {
		readings = []string{spicelive.ReadingLive}
	}
	for _, rd := range readings {
		runs, err := results.LoadExtra[spicelive.LiveRecord](c.ReadingDir(rd), spicelive.LiveFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue // nothing of this reading yet
		}
		if err != nil {
			return nil, nil, err
		}
		for _, r := range runs {
			d := r.Cell.Dir()
			if out[d] == nil {
				out[d] = map[string]map[measure.Arm]*series{}
				cells = append(cells, r.Cell)
			}
			if out[d][rd] == nil {
				out[d][rd] = map[measure.Arm]*series{}
			}
			s := out[d][rd][measure.Arm(r.Arm)]
			if s == nil {
				s = &series{cell: r.Cell, reading: rd, arm: measure.Arm(r.Arm)}
				out[d][rd][measure.Arm(r.Arm)] = s
			}
			s.runs = append(s.runs, r)
		}
	}
	for _, byReading := range out {
		for _, byArm := range byReading {
			for _, s := range byArm {
				slices.SortFunc(s.runs, func(a, b liveRun) int { return cmp.Compare(a.Repeat, b.Repeat) })
			}
		}
	}
	slices.SortFunc(cells, func(a, b results.Cell) int {
		if results.Less(a, b) {
			return -1
		}
		if results.Less(b, a) {
			return 1
		}
		return 0
	})
	return out, cells, nil
}

func (s *series) summarise(warmup time.Duration) (stats.Cell, error) {
	reps := make([]stats.Repeat, len(s.runs))
	for i, r := range s.runs {
		reps[i] = r.Run.StatsRepeat()
	}
	return stats.SummariseCell(reps, warmup)
}

func fms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// what each reading's round trip is, for the tables.
var readingMeasures = map[string]string{
	spicelive.ReadingLive:      "key press to the first draw of the typing area, at the client end of the tunnel",
	spicelive.ReadingReplay:    "key press to its echo, the reference session's shape played by spicelike",
	spicelive.ReadingSynthetic: "64-byte echo beside a saturating channel (the headline's workload)",
}

// Summarise writes the summary of c.Workdir as markdown: per cell, each
// reading's figures per arm (medians over repeats of each repeat's own
// percentiles), each arm read against tcp by stats.Compare, and each
// repeat's own p50 and p95. For a control it writes the control's table
// and checks instead, and returns an error when
// one fails. It fails when the work directory holds no runs.
func Summarise(w io.Writer, c spicelive.Config) error {
	all, cells, err := loadSeries(c)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		return fmt.Errorf("no runs in %s yet", c.Workdir)
	}
	if c.Control {
		return summariseControl(w, c, all, cells)
	}
	fmt.Fprintf(w, "# A real SPICE session over the arms\n\n")
	fmt.Fprintf(w, "Each cell's figures are the median over repeats of each repeat's own percentile, in milliseconds; the spread is the "+
		"highest minus the lowest repeat p95, and a verdict reads an arm against tcp by the headline's rule (stats.Compare): "+
		"a difference within the wider spread is unresolved. The first %v of each run is left out.\n\n", c.Warmup)
	for _, rd := range c.Readings {
		m := readingMeasures[rd]
		if rd == spicelive.ReadingReplay && c.Recording != "" {
			m = fmt.Sprintf("key press to its echo, the shipped %q recording (spicelike.Recording) played by spicelike", c.Recording)
		}
		fmt.Fprintf(w, "- %s: %s\n", rd, m)
	}
	fmt.Fprintln(w)
	settingsIntro(w, c)
	orderIntro(w, c)
	if c.Display != xsession.DisplayNone {
		displayIntro(w, c)
	}
	for _, cell := range cells {
		fmt.Fprintf(w, "## %s, %s%% loss\n\n", cell.Title(), num(cell.LossPct))
		byReading := all[cell.Dir()]
		cellTable(w, c, byReading)
		verdictTable(w, c, byReading)
		repeatTable(w, c, byReading)
		if c.Display != xsession.DisplayNone {
			displayTable(w, c, byReading)
		}
		runRecordTable(w, c, byReading)
		waitTable(w, c, byReading)
	}
	pixelTable(w, c, all, cells)
	return neighboursSection(w, c, all)
}

// keyMs is a percentile of reading rd in ms, marked as at least that long
// (≥) where it is a live key counted at the timeout.
func keyMs(c spicelive.Config, rd string, d time.Duration) string {
	if rd == spicelive.ReadingLive && c.Display != xsession.DisplayNone && c.KeyTimeout > 0 && d >= c.KeyTimeout {
		return "≥" + fms(d)
	}
	return fms(d)
}

func num(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}

func cellTable(w io.Writer, c spicelive.Config, byReading map[string]map[measure.Arm]*series) {
	pic := c.Display != xsession.DisplayNone
	head, rule := "", ""
	if pic {
		head, rule = " frames/s at the client | of drawn | stream share |", "---|---|---|"
	}
	fmt.Fprintln(w, "| reading | arm | repeats | p50 | p95 | p99 | p95 spread | p95 range | samples/run | unanswered or timed out | display Mbit/s |"+head)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|"+rule)
	for _, rd := range c.Readings {
		for _, arm := range c.Arms {
			s := byReading[rd][arm]
			if s == nil {
				continue
			}
			tail := ""
			if pic {
				cells := []string{"-", "-", "-"}
				if rd == spicelive.ReadingLive {
					cells = pictureMedians(c, s)
				}
				tail = " " + strings.Join(cells, " | ") + " |"
			}
			sc, err := s.summarise(c.Warmup)
			if err != nil {
				fmt.Fprintf(w, "| %s | %s | 0 of %d | - | - | - | - | - | - | %d | - |%s\n", rd, arm, len(s.runs), sc.Timeouts, tail)
				continue
			}
			rep := fmt.Sprintf("%d", sc.Measured)
			if sc.Unmeasured > 0 {
				rep = fmt.Sprintf("%d of %d", sc.Measured, sc.Measured+sc.Unmeasured)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s-%s | %.0f | %d | %.2f |%s\n", rd, arm, rep,
				keyMs(c, rd, sc.P50), keyMs(c, rd, sc.P95), keyMs(c, rd, sc.P99), fms(sc.Spread), fms(sc.P95Min), fms(sc.P95Max), sc.SamplesPerRun, sc.Timeouts, sc.Throughput.Median, tail)
		}
	}
	fmt.Fprintln(w)
}

func verdictTable(w io.Writer, c spicelive.Config, byReading map[string]map[measure.Arm]*series) {
	var rows []string
	estimated := false
	for _, rd := range c.Readings {
		base := byReading[rd][measure.TCP]
		if base == nil {
			continue
		}
		a, err := base.summarise(c.Warmup)
		if err != nil {
			continue
		}
		for _, arm := range c.Arms {
			s := byReading[rd][arm]
			if arm == measure.TCP || s == nil {
				continue
			}
			b, err := s.summarise(c.Warmup)
			if err != nil {
				continue
			}
			cmpr, err := stats.Compare(a, b)
			if err != nil {
				continue
			}
			reason := cmpr.Reason
			if cmpr.U.Note != "" {
				reason = strings.TrimSpace(reason + " " + cmpr.U.Note)
			}
			if rd == spicelive.ReadingLive && c.Display != xsession.DisplayNone {
				if n := notSaturated(c, base, s); n != "" {
					reason = strings.TrimSpace(reason + " " + n)
				}
			}
			need := "-"
			if cmpr.Verdict == stats.Unresolved || base.cell.LossPct > 0 {
				need = repeatsNeeded(a, b)
				estimated = true
			}
			rows = append(rows, fmt.Sprintf("| %s | %s against tcp | %+.1f | %s | %s | %.3f | %s | %s |", rd, arm,
				float64(cmpr.Delta)/float64(time.Millisecond), fms(cmpr.Threshold), cmpr.Verdict, cmpr.U.P, need, reason))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "| reading | comparison | p95 delta | threshold | verdict | Mann-Whitney p | repeats per arm to resolve | note |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	fmt.Fprintln(w, strings.Join(rows, "\n"))
	fmt.Fprintln(w)
	if estimated {
		fmt.Fprintf(w, "Repeats per arm to resolve (unresolved verdicts and lossy cells), with these repeats' spread: the smallest n at which a rule "+
			"resolves in at least %.0f%% of %d simulated pairs (stats.EstimateRepeats, seed %d). Model: %s.\n\n",
			stats.DefaultRepeatsPower*100, stats.DefaultRepeatsTrials, estimateSeed, stats.RepeatsModel)
	}
}

// estimateSeed seeds the summary's repeats estimates.
const estimateSeed = 1

// repeatsNeeded says at how many repeats per arm the spread rule and the U
// test would resolve b against a, estimated from their repeat p95s.
func repeatsNeeded(a, b stats.Cell) string {
	e, err := stats.EstimateRepeats(durationsMs(a.RepeatP95s()), durationsMs(b.RepeatP95s()), stats.RepeatsOptions{Seed: estimateSeed})
	if err != nil {
		return fmt.Sprintf("no estimate: %d and %d repeats measured, %d per arm needed", a.Measured, b.Measured, stats.MinPilotRepeats)
	}
	at := func(n int) string {
		if n == 0 {
			return fmt.Sprintf(": not within %d", e.Cap)
		}
		return fmt.Sprintf(" resolves at n=%d", n)
	}
	return fmt.Sprintf("spread rule%s; U test%s", at(e.SpreadN), at(e.UN))
}

func durationsMs(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

func repeatTable(w io.Writer, c spicelive.Config, byReading map[string]map[measure.Arm]*series) {
	fmt.Fprintf(w, "Each repeat's own p50 / p95:\n\n| reading | arm |")
	for r := 1; r <= c.Repeats; r++ {
		fmt.Fprintf(w, " r%d |", r)
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", c.Repeats))
	for _, rd := range c.Readings {
		for _, arm := range c.Arms {
			s := byReading[rd][arm]
			if s == nil {
				continue
			}
			cells := make([]string, c.Repeats)
			for i := range cells {
				cells[i] = " |"
			}
			for _, run := range s.runs {
				if run.Repeat < 1 || run.Repeat > c.Repeats {
					continue
				}
				v := " failed |"
				if run.Failed == "" {
					if sum, err := stats.SummariseRepeat(run.StatsRepeat(), c.Warmup); err == nil {
						v = fmt.Sprintf(" %s / %s |", keyMs(c, rd, sum.P50), keyMs(c, rd, sum.P95))
					} else {
						v = " no sample |"
					}
				}
				cells[run.Repeat-1] = v
			}
			fmt.Fprintf(w, "| %s | %s |%s\n", rd, arm, strings.Join(cells, ""))
		}
	}
	fmt.Fprintln(w)
}

// settingsIntro names the settings a deployment could choose that the
// runs were made with, when any was.
func settingsIntro(w io.Writer, c spicelive.Config) {
	var parts []string
	if len(c.ServerOptions) > 0 {
		parts = append(parts, "spice-server with "+strings.Join(c.ServerOptions, " "))
	}
	if c.NotSentLowat > 0 {
		parts = append(parts, fmt.Sprintf("TCP_NOTSENT_LOWAT %d bytes on the TCP arms' carriers", c.NotSentLowat))
	}
	if c.SpiceRcvBuf > 0 {
		parts = append(parts, fmt.Sprintf("SO_RCVBUF %d bytes on the tunnel's connections to spice-server", c.SpiceRcvBuf))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "Settings: %s.\n\n", strings.Join(parts, "; "))
	}
}

// eachLiveRun calls fn with each measured live run of a cell, arms in
// c's order.
func eachLiveRun(c spicelive.Config, byReading map[string]map[measure.Arm]*series, fn func(arm measure.Arm, run liveRun)) {
	for _, arm := range c.Arms {
		s := byReading[spicelive.ReadingLive][arm]
		if s == nil {
			continue
		}
		for _, run := range s.runs {
			if run.Failed == "" {
				fn(arm, run)
			}
		}
	}
}

// waitTable says, per live run, where its keys' answers waited
// (KeyPaths): the medians of its keys past the warm-up. Runs whose traces
// are gone are left out, with a note; with none left, so is the table.
func waitTable(w io.Writer, c spicelive.Config, byReading map[string]map[measure.Arm]*series) {
	var rows []string
	missing := 0
	eachLiveRun(c, byReading, func(arm measure.Arm, run liveRun) {
		m, err := medianWaits(c, run)
		if err != nil {
			missing++
			return
		}
		unread := "-"
		if m.unread >= 0 {
			unread = fms(m.unread)
		}
		rows = append(rows, fmt.Sprintf("| %s | r%d | %s | %s | %s | %s | %s | %.0f |", arm, run.Repeat, fms(m.draw), fms(m.up), fms(m.server), unread, fms(m.down), float64(m.ahead)/1000))
	})
	if len(rows) == 0 {
		return // no run's traces are here (an example, or a copied summary)
	}
	fmt.Fprintf(w, "Where each live run's keys waited (KeyPaths), medians of its keys past the warm-up, ms: up is the key from the client end to the server end; "+
		"server from there to its draw leaving spice-server, of which unread is the tunnel's server end blocked writing onward; down the draw from the server end to the client end, "+
		"behind the display KB ahead of it:\n\n")
	fmt.Fprintf(w, "| arm | repeat | key-to-draw | up | server | unread | down | ahead KB |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
	if missing > 0 {
		fmt.Fprintf(w, "\n%d measured runs left out: their traces or live.json could not be read.\n", missing)
	}
	fmt.Fprintln(w)
}
