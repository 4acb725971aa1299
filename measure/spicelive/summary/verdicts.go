package summary

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/stats"
)

// ArmFigures is one arm's live figures in one cell, recomputed from a
// samples directory's keys.csv and runs.csv.
type ArmFigures struct {
	Cell string
	Arm  string
	// Draw is key-to-draw over each repeat's keys past the warm-up, its
	// Throughput the display's Mbit/s in each run's measured part;
	// Pixel is key-to-pixel over the keys that have it, nil with none.
	Draw  stats.Cell
	Pixel *stats.Cell
	// Keys counts the timed keys past the warm-up over all repeats, and
	// UnderGoal those of them drawn within spicelive.KeyGoal.
	Keys      int
	UnderGoal int
	// GoalMissed counts the repeats whose own p95 is over spicelive.KeyGoal.
	GoalMissed int
	// Pictures counts the measured runs with the picture's figures (none
	// in directories recorded before it was measured), GoodPictures those
	// whose picture was good; ClientFPS and DrawnFPS are the medians over
	// them of the workload's frames a second at the client and drawn.
	Pictures, GoodPictures int
	ClientFPS, DrawnFPS    float64
}

// MeetsGoal says whether the arm's key-to-draw p95 is within spicelive.KeyGoal.
func (a ArmFigures) MeetsGoal() bool { return a.Draw.Measured > 0 && a.Draw.P95 <= spicelive.KeyGoal }

// Verdict is arm B read against arm A in one cell by stats.Compare on
// key-to-draw: a positive Delta means B's median p95 is higher.
type Verdict struct {
	Cell string
	A, B string
	stats.Comparison
}

// Verdicts is what VerdictsFromSamples recomputes from one directory.
type Verdicts struct {
	Dir    string
	Warmup time.Duration
	// Arms is every cell's arms, cells in runs.csv's order, arms in the
	// settings' order; Pairs every pair of arms in each cell, A before B
	// in that order.
	Arms  []ArmFigures
	Pairs []Verdict
}

// find returns the verdict of b against a in cell, reading a pair given
// the other way round with its delta's sign turned.
func (v Verdicts) find(cell, a, b string) (Verdict, bool) {
	for _, p := range v.Pairs {
		if p.Cell != cell {
			continue
		}
		switch {
		case p.A == a && p.B == b:
			return p, true
		case p.A == b && p.B == a:
			p.A, p.B, p.Delta = a, b, -p.Delta
			switch p.Verdict {
			case stats.Better:
				p.Verdict = stats.Worse
			case stats.Worse:
				p.Verdict = stats.Better
			}
			return p, true
		}
	}
	return Verdict{}, false
}

// Arm returns an arm's figures in cell.
func (v Verdicts) Arm(cell, arm string) (ArmFigures, bool) {
	for _, a := range v.Arms {
		if a.Cell == cell && a.Arm == arm {
			return a, true
		}
	}
	return ArmFigures{}, false
}

// VerdictsFromSamples reads a samples directory (keys.csv, runs.csv and
// spicelive.json, as WriteSamples and the run leave them) and recomputes
// each cell's and arm's key-to-draw and key-to-pixel figures, the first
// warm-up of each run left out as Summarise does, and every pair of arms'
// verdict by stats.Compare.
func VerdictsFromSamples(dir string) (Verdicts, error) {
	c, err := spicelive.LoadConfig(dir)
	if err != nil {
		return Verdicts{}, err
	}
	byArm, cells, err := readSamples(dir)
	if err != nil {
		return Verdicts{}, err
	}
	v := Verdicts{Dir: dir, Warmup: c.Warmup}
	for _, cell := range cells {
		var figs []ArmFigures
		for _, a := range c.Arms {
			rs := byArm[cellArm{cell, string(a)}]
			if rs == nil {
				continue
			}
			figs = append(figs, armFiguresOf(cell, string(a), rs, c.Warmup))
		}
		v.Arms = append(v.Arms, figs...)
		for i, a := range figs {
			for _, b := range figs[i+1:] {
				if a.Draw.Measured == 0 || b.Draw.Measured == 0 {
					continue
				}
				cmpr, err := stats.Compare(a.Draw, b.Draw)
				if err != nil {
					return Verdicts{}, fmt.Errorf("%s: %s: %s against %s: %w", dir, cell, b.Arm, a.Arm, err)
				}
				v.Pairs = append(v.Pairs, Verdict{Cell: cell, A: a.Arm, B: b.Arm, Comparison: cmpr})
			}
		}
	}
	if len(v.Arms) == 0 {
		return Verdicts{}, fmt.Errorf("%s: no live runs in %s", dir, RunsCSV)
	}
	return v, nil
}

// sampledRun is one run read back from a samples directory: its
// key-to-draw and key-to-pixel samples and its picture's figures.
type sampledRun struct {
	repeat      int
	draw, pixel stats.Repeat
	picture     *picture.PictureRecord
}

// cellArm names one arm in one cell.
type cellArm struct{ cell, arm string }

// readSamples reads a samples directory's runs.csv and keys.csv into
// each arm's runs, and the cells in runs.csv's order.
func readSamples(dir string) (map[cellArm][]*sampledRun, []string, error) {
	f, err := os.Open(filepath.Join(dir, RunsCSV))
	if err != nil {
		return nil, nil, err
	}
	runs, err := readRuns(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunsCSV), err)
	}
	keys, err := readCSV(filepath.Join(dir, KeysCSV), keysHeader)
	if err != nil {
		return nil, nil, err
	}
	byArm := map[cellArm][]*sampledRun{}
	byRun := map[string]*sampledRun{}
	var cells []string
	for i, r := range runs {
		x := &sampledRun{repeat: r.Repeat, picture: r.Picture}
		if r.Failed {
			x.draw.Failed, x.pixel.Failed = "failed", "failed"
		} else {
			var err1, err2 error
			x.draw.Timeouts, err1 = strconv.Atoi(r.Fields["timeouts"])
			x.draw.ThroughputMbit, err2 = strconv.ParseFloat(r.Fields["display_mbit"], 64)
			if err := errors.Join(err1, err2); err != nil {
				return nil, nil, fmt.Errorf("%s line %d: %w", RunsCSV, i+2, err)
			}
		}
		if !slices.Contains(cells, r.Cell) {
			cells = append(cells, r.Cell)
		}
		k := cellArm{r.Cell, r.Arm}
		byArm[k] = append(byArm[k], x)
		byRun[r.Cell+" "+r.Arm+" "+strconv.Itoa(r.Repeat)] = x
	}
	for i, k := range keys {
		x := byRun[k[0]+" "+k[1]+" "+k[2]]
		if x == nil {
			return nil, nil, fmt.Errorf("%s line %d: a key of a run %s has no row", KeysCSV, i+2, RunsCSV)
		}
		at, err1 := msDuration(k[4])
		draw, err2 := msDuration(k[5])
		if err := errors.Join(err1, err2); err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", KeysCSV, i+2, err)
		}
		x.draw.Samples = append(x.draw.Samples, stats.Sample{Offset: at, RTT: draw})
		if k[6] != "" {
			px, err := msDuration(k[6])
			if err != nil {
				return nil, nil, fmt.Errorf("%s line %d: %w", KeysCSV, i+2, err)
			}
			x.pixel.Samples = append(x.pixel.Samples, stats.Sample{Offset: at, RTT: px})
		}
	}
	return byArm, cells, nil
}

// armFiguresOf computes one arm's figures in cell from its runs, sorting
// them by repeat; warmup is left out of each run.
func armFiguresOf(cell, arm string, rs []*sampledRun, warmup time.Duration) ArmFigures {
	slices.SortFunc(rs, func(x, y *sampledRun) int { return cmp.Compare(x.repeat, y.repeat) })
	f := ArmFigures{Cell: cell, Arm: arm}
	var draws, pixels []stats.Repeat
	var clientFPS, drawnFPS []float64
	hasPixel := false
	for _, r := range rs {
		draws, pixels = append(draws, r.draw), append(pixels, r.pixel)
		if p := r.picture; p != nil && r.draw.Failed == "" {
			clientFPS, drawnFPS = append(clientFPS, p.ClientFPS), append(drawnFPS, p.DrawnFPS)
			f.Pictures++
			if p.Good {
				f.GoodPictures++
			}
		}
		hasPixel = hasPixel || len(r.pixel.Samples) > 0
		for _, s := range r.draw.Samples {
			if s.Offset >= warmup {
				f.Keys++
				if s.RTT <= spicelive.KeyGoal {
					f.UnderGoal++
				}
			}
		}
	}
	if f.Pictures > 0 {
		f.ClientFPS, f.DrawnFPS = medianFloat(clientFPS), medianFloat(drawnFPS)
	}
	// An arm with no measured repeat is kept, and compared with none.
	f.Draw, _ = stats.SummariseCell(draws, warmup)
	for _, r := range f.Draw.Repeats {
		if r.P95 > spicelive.KeyGoal {
			f.GoalMissed++
		}
	}
	if hasPixel {
		if p, err := stats.SummariseCell(pixels, warmup); err == nil {
			f.Pixel = &p
		}
	}
	return f
}

// medianFloat is the median of xs (which it sorts), the mean of the two
// middle ones for an even count.
func medianFloat(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// msDuration reads a figure in ms as keys.csv writes it.
func msDuration(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(f * float64(time.Millisecond)), nil
}

// readCSV reads a samples file's rows after checking its header.
// samplesColumns is how many columns the first samples files had.
const samplesColumns = 8

func readCSV(path string, header []string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Columns are only ever added at the end: a file written before has a
	// leading part of today's header, at least the first samplesColumns.
	if len(rows) == 0 || len(rows[0]) < samplesColumns || len(rows[0]) > len(header) || !slices.Equal(rows[0], header[:len(rows[0])]) {
		return nil, fmt.Errorf("%s: not a samples file: its first row is not %v or a leading part of it", path, header)
	}
	return rows[1:], nil
}

// marker is the HTML comment a doc puts after a sentence that states
// the verdict v of results directory dir: the arm with the lower median
// p95 first, "<", the other ("=" when they are equal), then resolved or
// unresolved by the rule.
func (v Verdict) marker(dir string) string {
	lo, rel, hi := v.A, "<", v.B
	switch {
	case v.Delta < 0:
		lo, hi = v.B, v.A
	case v.Delta == 0:
		rel = "="
	}
	res := "unresolved"
	if v.Verdict != stats.Unresolved {
		res = "resolved"
	}
	return fmt.Sprintf("<!-- verdict %s %s %s%s%s %s -->", dir, v.Cell, lo, rel, hi, res)
}

// WriteMarkdown writes v's figures and verdicts as markdown tables, in
// milliseconds: per cell each arm's key-to-draw (and key-to-pixel where
// had) median over repeats of each repeat's p50, p95 and p99, its p95
// spread and range, against the key goal, and the display's median
// Mbit/s; then every pair of arms.
func (v Verdicts) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "Recomputed from the per-key samples in %s: the first %v of each run left out; each figure the median over repeats of each repeat's own percentile, ms. "+
		"The key goal column reads each arm's key-to-draw p95 against spicelive.KeyGoal, as docs/spice-live.md defines it; "+
		"verdicts read the difference of two arms' median p95s against the wider of their p95 spreads (stats.Compare).\n\n",
		v.Dir, v.Warmup)
	pictures := slices.ContainsFunc(v.Arms, func(a ArmFigures) bool { return a.Pictures > 0 })
	var last string
	for i, a := range v.Arms {
		if a.Cell != last {
			last = a.Cell
			fmt.Fprintf(w, "Cell %s:\n\n", a.Cell)
			fmt.Fprintf(w, "| arm | repeats | p50 | p95 | p99 | p95 spread | p95 range | keys | unanswered | keys within %v | repeat p95s over %v | key goal | pixel p50 | pixel p95 | display Mbit/s |", spicelive.KeyGoal, spicelive.KeyGoal)
			rule := "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
			if pictures {
				fmt.Fprint(w, " frames/s at the client | drawn | good pictures |")
				rule += "---|---|---|"
			}
			fmt.Fprintln(w)
			fmt.Fprintln(w, rule)
		}
		pic := ""
		if pictures {
			pic = " - | - | - |"
			if a.Pictures > 0 {
				pic = fmt.Sprintf(" %.1f | %.1f | %d of %d |", a.ClientFPS, a.DrawnFPS, a.GoodPictures, a.Pictures)
			}
		}
		d := a.Draw
		goal := "missed"
		if a.MeetsGoal() {
			goal = "met"
		}
		pp50, pp95 := "-", "-"
		if a.Pixel != nil {
			pp50, pp95 = fms(a.Pixel.P50), fms(a.Pixel.P95)
		}
		share := 0.0
		if a.Keys > 0 {
			share = 100 * float64(a.UnderGoal) / float64(a.Keys)
		}
		if d.Measured == 0 {
			fmt.Fprintf(w, "| %s | 0 of %d | - | - | - | - | - | 0 | %d | - | - | - | - | - | - |%s\n", a.Arm, d.Unmeasured, d.Timeouts, pic)
		} else {
			fmt.Fprintf(w, "| %s | %d of %d | %s | %s | %s | %s | %s-%s | %d | %d | %.0f%% | %d | %s | %s | %s | %.2f |%s\n", a.Arm, d.Measured, d.Measured+d.Unmeasured,
				fms(d.P50), fms(d.P95), fms(d.P99), fms(d.Spread), fms(d.P95Min), fms(d.P95Max), a.Keys, d.Timeouts, share, a.GoalMissed, goal, pp50, pp95, d.Throughput.Median, pic)
		}
		if i+1 == len(v.Arms) || v.Arms[i+1].Cell != a.Cell {
			fmt.Fprintln(w)
			v.writePairs(w, a.Cell)
		}
	}
	return nil
}

func (v Verdicts) writePairs(w io.Writer, cell string) {
	fmt.Fprintln(w, "| comparison | p95 delta | threshold | verdict | Mann-Whitney p | marker |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, p := range v.Pairs {
		if p.Cell != cell {
			continue
		}
		fmt.Fprintf(w, "| %s against %s | %+.1f | %s | %s | %.3f | `%s` |\n", p.B, p.A, float64(p.Delta)/float64(time.Millisecond),
			fms(p.Threshold), p.Verdict, p.U.P, p.marker(ResultsName(v.Dir)))
	}
	fmt.Fprintln(w)
}

// ResultsName is a samples directory's name under docs/results, as the
// docs cite it (such as spicelive-cc-8010), or its last element when it
// is not under docs/results.
func ResultsName(dir string) string {
	d := filepath.ToSlash(filepath.Clean(dir))
	if i := strings.LastIndex(d, "docs/results/"); i >= 0 {
		return d[i+len("docs/results/"):]
	}
	return filepath.Base(dir)
}
