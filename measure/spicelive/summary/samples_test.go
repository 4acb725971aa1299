package summary

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/stats"
)

// committedRun is one run's key-to-draw samples as a committed keys.csv
// holds them.
type committedRun struct {
	cell, arm string
	repeat    int
	samples   []stats.Sample
}

func readKeysCSV(t *testing.T, path string) []*committedRun {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// Files written before keys were censored lack the last column.
	if len(rows) < 2 || !slices.Equal(rows[0], keysHeader) && !slices.Equal(rows[0], keysHeader[:len(keysHeader)-1]) {
		t.Fatalf("%s: want a header %v and rows", path, keysHeader)
	}
	byRun := map[string]*committedRun{}
	var out []*committedRun
	for _, r := range rows[1:] {
		rep, err1 := strconv.Atoi(r[2])
		off, err2 := strconv.ParseFloat(r[4], 64)
		draw, err3 := strconv.ParseFloat(r[5], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: row %v does not parse", path, r)
		}
		k := r[0] + "/" + r[1] + "/" + r[2]
		run := byRun[k]
		if run == nil {
			run = &committedRun{cell: r[0], arm: r[1], repeat: rep}
			byRun[k] = run
			out = append(out, run)
		}
		run.samples = append(run.samples, stats.Sample{Offset: msDur(off), RTT: msDur(draw)})
	}
	return out
}

func msDur(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// repeatRow matches a row of a summary's table of each repeat's own p50 /
// p95: the arm, then one "p50 / p95" per repeat.
var repeatRow = regexp.MustCompile(`^\| live \| ([a-z0-9+-]+) \|((?: ≥?[0-9.]+ / ≥?[0-9.]+ \|)+)`)

// summaryRepeats reads each arm's rows of per-repeat p50 / p95 from a
// summary.md, in ms.
func summaryRepeats(t *testing.T, path string) map[string][][][2]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][][][2]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := repeatRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var row [][2]float64
		for _, c := range strings.Split(strings.Trim(m[2], " |"), "|") {
			var p50, p95 float64
			if _, err := fmt.Sscanf(strings.ReplaceAll(strings.TrimSpace(c), "≥", ""), "%g / %g", &p50, &p95); err != nil {
				t.Fatalf("%s: %q: %v", path, c, err)
			}
			row = append(row, [2]float64{p50, p95})
		}
		out[m[1]] = append(out[m[1]], row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recomputed is each repeat's p50 and p95 of runs (one cell and arm, in
// repeat order), past warmup, in ms.
func recomputed(t *testing.T, runs []*committedRun, warmup time.Duration) [][2]float64 {
	var out [][2]float64
	for _, r := range runs {
		s, err := stats.SummariseRepeat(stats.Repeat{Samples: r.samples}, warmup)
		if err != nil {
			t.Fatalf("%s %s r%d: %v", r.cell, r.arm, r.repeat, err)
		}
		out = append(out, [2]float64{s.P50.Seconds() * 1e3, s.P95.Seconds() * 1e3})
	}
	return out
}

// matchesRow reports whether got (recomputed) is one of rows (from the
// summary), to the summary's 0.1 ms.
func matchesRow(got [][2]float64, rows [][][2]float64) bool {
	return slices.ContainsFunc(rows, func(row [][2]float64) bool {
		return slices.EqualFunc(got, row, func(a, b [2]float64) bool {
			return math.Abs(a[0]-b[0]) <= 0.051 && math.Abs(a[1]-b[1]) <= 0.051
		})
	})
}

// TestCommittedSamplesGiveTheSummary recomputes, from every per-key
// sample file committed under docs/results, each live run's p50 and p95
// and finds them in the summary committed beside it; then makes one run's
// keys slower and checks that the summary no longer matches.
func TestCommittedSamplesGiveTheSummary(t *testing.T) {
	files, err := filepath.Glob("../../../docs/results/*/" + KeysCSV)
	deeper, _ := filepath.Glob("../../../docs/results/*/*/" + KeysCSV)
	files = append(files, deeper...)
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed %s under docs/results (%v): the docs cite live runs whose samples must be there", KeysCSV, err)
	}
	for _, path := range files {
		dir := filepath.Dir(path)
		c, err := spicelive.LoadConfig(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		rows := summaryRepeats(t, filepath.Join(dir, "summary.md"))
		groups := map[string][]*committedRun{}
		var order []string
		for _, r := range readKeysCSV(t, path) {
			k := r.cell + " " + r.arm
			if groups[k] == nil {
				order = append(order, k)
			}
			groups[k] = append(groups[k], r)
		}
		for _, k := range order {
			runs := groups[k]
			slices.SortFunc(runs, func(a, b *committedRun) int { return a.repeat - b.repeat })
			got := recomputed(t, runs, c.Warmup)
			if !matchesRow(got, rows[runs[0].arm]) {
				t.Errorf("%s: %s: recomputed p50 / p95 %v are not in summary.md's rows %v", dir, k, got, rows[runs[0].arm])
				continue
			}
			// The broken variant: the first run's keys each a millisecond
			// slower must no longer match.
			slow := slices.Clone(runs[0].samples)
			for j := range slow {
				slow[j].RTT += time.Millisecond
			}
			broken := append([]*committedRun{{cell: runs[0].cell, arm: runs[0].arm, repeat: runs[0].repeat, samples: slow}}, runs[1:]...)
			if matchesRow(recomputed(t, broken, c.Warmup), rows[runs[0].arm]) {
				t.Errorf("%s: %s: keys a millisecond slower still match the summary: the check cannot fail", dir, k)
			}
		}
	}
}
