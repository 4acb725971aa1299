package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// loadSeed writes the synthetic matrix to disk and reads it back, so the
// tests go through the on-disk schema as summarise does.
func loadSeed(t *testing.T, mutate func([]results.Run)) []results.Run {
	t.Helper()
	runs := reporttest.Seed()
	if mutate != nil {
		mutate(runs)
	}
	dir := t.TempDir()
	if err := reporttest.Write(dir, runs); err != nil {
		t.Fatal(err)
	}
	got, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func markdown(t *testing.T, runs []results.Run, opts report.Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Markdown(&b, runs, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// section returns the markdown from the heading that starts with title up
// to the next heading of the same level.
func section(t *testing.T, md, title string) string {
	t.Helper()
	i := strings.Index(md, "\n"+title)
	if i < 0 {
		t.Fatalf("no section %q in:\n%s", title, md)
	}
	rest := md[i+1:]
	level := rest[:strings.Index(rest, " ")+1]
	if j := strings.Index(rest[len(title):], "\n"+level); j >= 0 {
		return rest[:len(title)+j]
	}
	return rest
}

func TestSeedMarkdownReproducesReferenceTables(t *testing.T) {
	md := markdown(t, loadSeed(t, nil), report.Options{Source: "seed"})
	head := section(t, md, "## Interactive round trip, headline: kernel TCP reno")
	for _, want := range []string{
		// The reference's per-arm rows (Cubic headline, 80 ms / 10 Mbit).
		"| 0% | tcp | 154.1 | 171.0 | 172.2 | 1.2 | 169.8-171.0 | 232 | 0 | 5/5 |",
		"| 0% | quic | 143.2 | 166.2 | 167.4 | 1.0 | 166.2-167.2 | 243 | 0 | 5/5 |",
		"| 1% | tcp | 80.4 | 82.8 | 392.5 | 0.1 | 82.7-82.8 | 368 | 0 | 5/5 |",
		"| 1% | quic | 101.1 | 144.3 | 228.2 | 0.9 | 143.8-144.7 | 309 | 0 | 5/5 |",
		"| 2% | tcp | 80.4 | 83.4 | 405.4 | 300.5 | 82.7-383.2 | 347 | 0 | 5/5 |",
		"| 2% | quic | 112.7 | 158.4 | 309.1 | 73.2 | 145.2-218.4 | 283 | 0 | 5/5 |",
		// Its reading table.
		"| 80 ms / 10 Mbit | 0% | -4.8 | 1.2 | QUIC better |",
		"| 80 ms / 10 Mbit | 1% | +61.6 | 0.9 | QUIC worse |",
		"| 80 ms / 10 Mbit | 2% | +75.0 | 300.5 | unresolved |",
		// Five repeats: the interval is the range and says so.
		"82.7-82.8 (93.8%)†",
		"5 repeats are too few for a 95% interval",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("headline section lacks %q:\n%s", want, head)
		}
	}
	// The sensitivity cell is labelled and comes after the headline.
	hi := strings.Index(md, "## Interactive round trip, headline")
	si := strings.Index(md, "## Sensitivity cells: kernel TCP cubic (not the headline)")
	if si < 0 || si < hi {
		t.Errorf("sensitivity section missing or before the headline (headline at %d, sensitivity at %d)", hi, si)
	}
	if strings.Contains(head, "| 0% | tcp | 86.2 |") {
		t.Error("the cubic sensitivity cell leaked into the headline section")
	}
	tput := section(t, md, "## Throughput")
	for _, want := range []string{
		"| 80 ms / 10 Mbit | 1% | reno | 1.64 (1.62-1.66) | 1.56 (1.54-1.58) |",
		"| 80 ms / 10 Mbit | 0% | cubic (sensitivity) | 9.28 (9.19-9.37) |",
	} {
		if !strings.Contains(tput, want) {
			t.Errorf("throughput section lacks %q:\n%s", want, tput)
		}
	}
	if c := section(t, md, "## Connect time"); !strings.Contains(c, "| 80 ms / 10 Mbit | 401.6 ms (401.4-401.8), n=20 | 84.5 ms (84.3-84.7), n=20 |") {
		t.Errorf("connect section:\n%s", c)
	}
	if g := section(t, md, "## Was segmentation offload off?"); !strings.Contains(g, "| 80 ms / 10 Mbit | 1% | reno | quic | queue | off (5/5 runs) | 1436.1-1441.9 | 1442 | 1442 | 1500 of 2250 samples |") {
		t.Errorf("GSO section:\n%s", g)
	}
	w := section(t, md, "## Warnings")
	if !strings.Contains(w, "None:") || strings.Contains(w, "- **") {
		t.Errorf("warnings should say none:\n%s", w)
	}
	h := section(t, md, "## Host state and link")
	for _, want := range []string{"| `tcp_rmem` | 4096 131072 6291456 |", "| `tcp_available_congestion_control` | reno cubic bbr |", "| `offload` | (namespace=server device=qbs0 mtu=1500 gso_max_segs=1 tso=false gso=false gro=false) |", "Link backend: emulator; queue limit 110 packets", "server->client delay 40ms rate 10mbit loss 0% limit 110"} {
		if !strings.Contains(h, want) {
			t.Errorf("host section lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "`applied`") {
		t.Errorf("the host record's applied lines duplicate the link block:\n%s", h)
	}
}

func TestWarningsListTimeoutsFailuresAndGSO(t *testing.T) {
	runs := loadSeed(t, func(runs []results.Run) {
		for i := range runs {
			r := &runs[i]
			switch {
			case r.Cell.LossPct == 2 && r.Arm == "quic" && r.Repeat == 3 && r.Cell.CC == "reno":
				r.Timeouts = 1
			case r.Cell.LossPct == 1 && r.Arm == "tcp" && r.Repeat == 2:
				r.Failed = "server process exited: signal: killed"
			case r.Cell.LossPct == 1 && r.Arm == "quic" && r.Repeat == 5:
				r.GSOQueue = nil
			case r.Cell.LossPct == 0 && r.Arm == "quic" && r.Repeat == 4 && r.Cell.CC == "reno":
				r.GSOQueue = &gsocheck.Result{Verdict: gsocheck.On, Reason: "a sample held 9669 bytes per slot", Expected: 1442, Used: 40, Total: 50, PooledMean: 9669, Max: 9669}
			case r.Cell.LossPct == 0 && r.Arm == "tcp" && r.Repeat == 3 && r.Cell.CC == "reno":
				r.Link.Shaper = &shapedlink.ShaperReport{Priority: "SCHED_FIFO 1, nice 0 (inherited)", Directions: []shapedlink.ShaperStats{
					{Direction: "server->client", ShaperCounters: shapedlink.ShaperCounters{Forwarded: 1000}, LateP99Ms: 0.2},
					{Direction: "client->server", ShaperCounters: shapedlink.ShaperCounters{Forwarded: 900, SocketDrops: 4}, LateP99Ms: 0.1},
				}}
			case r.Cell.LossPct == 2 && r.Arm == "tcp" && r.Cell.CC == "reno":
				// Clean counters: no warning.
				r.Link.Shaper = &shapedlink.ShaperReport{Priority: "SCHED_FIFO 1, nice 0 (inherited)", Directions: []shapedlink.ShaperStats{
					{Direction: "server->client", ShaperCounters: shapedlink.ShaperCounters{Forwarded: 1000}, LateP99Ms: 0.9},
				}}
			}
		}
	})
	md := markdown(t, runs, report.Options{})
	w := section(t, md, "## Warnings")
	if strings.Contains(w, "None:") {
		t.Fatalf("warnings say none:\n%s", w)
	}
	for _, want := range []string{
		"**80 ms / 10 Mbit, 2% loss, reno, quic** (timeout): 1 interactive exchange(s) timed out (1 in r3)",
		"**80 ms / 10 Mbit, 1% loss, reno, tcp** (unmeasured): 1 of 5 repeats unmeasured: r2: server process exited: signal: killed",
		"**80 ms / 10 Mbit, 0% loss, reno, quic** (gso): GSO check from queue: on in 1 of 5 runs",
		"**80 ms / 10 Mbit, 1% loss, reno, quic** (gso): no GSO evidence (neither queue samples nor egress counters) in 1 of 5 runs (r5)",
		"**80 ms / 10 Mbit, 0% loss, reno, tcp** (shaper): the emulator's own counters flag r3: client->server: the kernel dropped frames",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "2% loss, reno, tcp** (shaper)") {
		t.Errorf("clean emulator counters were warned about:\n%s", w)
	}
	head := section(t, md, "## Interactive round trip, headline")
	// The failed repeat is counted, and its absence moves the tcp 1% figures.
	if !strings.Contains(head, "| 1% | tcp | 80.4 | 82.8 | 392.5 | 0.1 | 82.7-82.8 | 368 | 0 | 4/5 |") {
		t.Errorf("tcp 1%% row should show 4/5 repeats:\n%s", head)
	}
	if !strings.Contains(head, "| 2% | quic | 112.7 | 158.4 | 309.1 | 73.2 | 145.2-218.4 | 283 | 1 | 5/5 |") {
		t.Errorf("quic 2%% row should show the timeout:\n%s", head)
	}
	if g := section(t, md, "## Was segmentation offload off?"); !strings.Contains(g, "| 80 ms / 10 Mbit | 0% | reno | quic | queue | on (1/5 runs) |") {
		t.Errorf("GSO section should show the on run:\n%s", g)
	}
}

func TestJSONDecodesWithTheSameFigures(t *testing.T) {
	runs := loadSeed(t, nil)
	var b bytes.Buffer
	built, err := report.Build(runs, report.Options{Source: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := built.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("JSON does not decode into report.Report: %v", err)
	}
	if rep.Runs != 40 || len(rep.Cells) != 4 || rep.Source != "seed" || rep.WarmupMs != 5000 {
		t.Fatalf("runs %d, cells %d, source %q, warm-up %v ms", rep.Runs, len(rep.Cells), rep.Source, rep.WarmupMs)
	}
	if rep.Warnings == nil || len(rep.Warnings) != 0 {
		t.Errorf("warnings = %#v, want an empty list", rep.Warnings)
	}
	want := map[float64]stats.Verdict{0: stats.Better, 1: stats.Worse, 2: stats.Unresolved}
	for _, c := range rep.Cells[:3] {
		if c.Cell.Sensitivity || len(c.Comparisons) != 1 {
			t.Fatalf("cell %s: sensitivity %v, %d comparisons", c.Dir, c.Cell.Sensitivity, len(c.Comparisons))
		}
		cp := c.Comparisons[0]
		if cp.A != "tcp" || cp.B != "quic" || cp.Verdict != want[c.Cell.LossPct] {
			t.Errorf("cell %s: %s against %s is %s, want %s", c.Dir, cp.B, cp.A, cp.Verdict, want[c.Cell.LossPct])
		}
		if cp.U.N1 != 5 || cp.U.N2 != 5 || cp.U.P <= 0 || cp.U.P > 1 {
			t.Errorf("cell %s: U test %+v", c.Dir, cp.U)
		}
	}
	if !rep.Cells[3].Cell.Sensitivity {
		t.Error("the last cell should be the cubic sensitivity cell")
	}
	q := rep.Cells[1].Arm("quic")
	if q == nil || len(q.RepeatP95Ms) != 5 || q.P95Ms != 144.34 || q.SpreadMs < 0.8999 || q.SpreadMs > 0.9001 {
		t.Errorf("1%% quic arm: %+v", q)
	}
}

func TestWarmupOverrideIsApplied(t *testing.T) {
	runs := loadSeed(t, nil)
	rep, err := report.Build(runs, report.Options{OverrideWarmup: true, Warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	// With no warm-up discarded, the ten 900 ms warm-up samples are the
	// slowest and dominate every repeat's p99.
	a := rep.Cells[0].Arm("tcp")
	if a.P99Ms != 900 || !rep.WarmupOverridden || rep.WarmupMs != 0 {
		t.Errorf("with -warmup 0: p99 %v ms (want 900), overridden %v, warm-up %v", a.P99Ms, rep.WarmupOverridden, rep.WarmupMs)
	}
	if _, err := report.Build(runs, report.Options{OverrideWarmup: true, Warmup: -time.Second}); err == nil {
		t.Error("a negative override should be refused")
	}
}

func TestDifferentRecordedWarmupsNeedAnOverride(t *testing.T) {
	runs := reporttest.Seed()
	runs[0].Warmup = 10 * time.Second
	_, err := report.Build(runs, report.Options{})
	if err == nil || !strings.Contains(err.Error(), "-warmup") {
		t.Fatalf("err = %v, want one that asks for -warmup", err)
	}
	if _, err := report.Build(runs, report.Options{OverrideWarmup: true, Warmup: reporttest.Warmup}); err != nil {
		t.Fatalf("with an override: %v", err)
	}
}

func TestNoRunsIsAnError(t *testing.T) {
	if _, err := report.Build(nil, report.Options{}); err == nil {
		t.Fatal("Build(nil) succeeded")
	}
}

func TestOtherArmsAreComparedToo(t *testing.T) {
	runs := reporttest.Cell(results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"},
		reporttest.ArmSpec{Arm: "tcp", P50: 80.4, P99: 392.5, RepeatP95: []float64{82.7, 82.8, 82.8, 82.8, 82.8}, N: 300, Mbit: 1.6, ConnectMs: 400},
		reporttest.ArmSpec{Arm: "quic", P50: 101.1, P99: 228.2, RepeatP95: []float64{143.8, 144.0, 144.3, 144.5, 144.7}, N: 300, Mbit: 1.6, ConnectMs: 84},
		reporttest.ArmSpec{Arm: "quic-priority", P50: 101.0, P99: 228.0, RepeatP95: []float64{143.5, 143.9, 144.1, 144.6, 145.0}, N: 300, Mbit: 1.6, ConnectMs: 84},
		reporttest.ArmSpec{Arm: "quic-per-channel", P50: 80.5, P99: 390, RepeatP95: []float64{82.9, 83.0, 83.1, 83.2, 83.3}, N: 300, Mbit: 1.6, ConnectMs: 84},
	)
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cells[0]
	got := map[string]string{}
	for _, cp := range c.Comparisons {
		got[cp.B+" vs "+cp.A] = cp.Reading
	}
	want := map[string]string{
		"quic vs tcp":             "QUIC worse",
		"quic-per-channel vs tcp": "unresolved", // +0.3 against a 0.4 spread
		"quic-priority vs tcp":    "quic-priority worse",
		"quic-priority vs quic":   "unresolved",
	}
	if len(got) != len(want) {
		t.Errorf("comparisons %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	var b bytes.Buffer
	if err := render.WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"### Reading them: QUIC against TCP", "### Reading them: quic-per-channel against TCP", "### Reading them: quic-priority against QUIC"} {
		if !strings.Contains(b.String(), h) {
			t.Errorf("markdown lacks %q", h)
		}
	}
}

func TestPlotsAreWritten(t *testing.T) {
	runs := loadSeed(t, nil)
	dir := filepath.Join(t.TempDir(), "plots")
	files, err := render.Plots(dir, runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 4 cells x 3 plots x 2 formats, and the index.
	if len(files) != 4*3*2+1 {
		t.Errorf("wrote %d files: %v", len(files), files)
	}
	cell := runs[0].Cell.Dir()
	for _, stem := range []string{"_rtt-cdf", "_p95-by-repeat", "_throughput"} {
		png, err := os.ReadFile(filepath.Join(dir, cell+stem+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
			t.Errorf("%s%s.png is not a PNG image (%d bytes)", cell, stem, len(png))
		}
		svg, err := os.ReadFile(filepath.Join(dir, cell+stem+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg, []byte("<svg")) || len(svg) < 1000 {
			t.Errorf("%s%s.svg is not an SVG (%d bytes)", cell, stem, len(svg))
		}
	}
	idx, err := os.ReadFile(filepath.Join(dir, render.PlotIndex))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(idx), "pooled over its measured repeats") || !strings.Contains(string(idx), cell+"_rtt-cdf.svg") {
		t.Errorf("plot index lacks the CDF caption or file:\n%s", idx)
	}
}

// TestPlotsStayInTheirDirectory: runs whose cell or arm hold a path
// (built in memory, past results.Run.Validate) make WritePlots refuse
// rather than write outside its directory.
func TestPlotsStayInTheirDirectory(t *testing.T) {
	for name, mutate := range map[string]func(*results.Run){
		"cc": func(r *results.Run) { r.Cell.CC = "../../../X" },
		// An arm names a file only with a timeline: a run whose link
		// changed on a schedule.
		"arm": func(r *results.Run) {
			r.Arm = "../../../Y"
			r.SamplesStart = r.Started
			r.Link.Changes = []shapedlink.AppliedChange{{At: r.Started.Add(time.Second), Set: "down"}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			runs := loadSeed(t, nil)
			for i := range runs {
				mutate(&runs[i])
			}
			root := t.TempDir()
			dir := filepath.Join(root, "a", "b", "plots")
			_, err := render.Plots(dir, runs, report.Options{})
			if err == nil || !strings.Contains(err.Error(), "not a plain file name") {
				t.Errorf("plots from a %s holding a path: %v, want a refusal", name, err)
			}
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
					t.Errorf("wrote %s, outside %s", p, dir)
				}
				return nil
			})
		})
	}
}

func TestAnArmWithNoMeasuredRepeatIsReportedNotFatal(t *testing.T) {
	runs := loadSeed(t, func(runs []results.Run) {
		for i := range runs {
			if runs[i].Cell.LossPct == 2 && runs[i].Arm == "quic" {
				runs[i].Failed = "client could not connect"
			}
		}
	})
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| 2% | quic | - | - | - | - | - | - | 0 | 0/5 |",
		"| 80 ms / 10 Mbit | 2% | - | - | not compared: ",
		"(no-comparison): quic against tcp: ",
		"(unmeasured): 5 of 5 repeats unmeasured: r1: client could not connect",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if _, err := render.WritePlots(t.TempDir(), rep); err != nil {
		t.Errorf("plots with an empty arm: %v", err)
	}
}

// TestPlotsDoNotFollowLinks: a symbolic link planted in the plot
// directory under a plot's or the index's name is refused, and the file
// it points to is left as it was; a plot already there is replaced.
func TestPlotsDoNotFollowLinks(t *testing.T) {
	runs := loadSeed(t, nil)
	root := t.TempDir()
	dir := filepath.Join(root, "plots")
	if _, err := render.Plots(dir, runs, report.Options{}); err != nil {
		t.Fatalf("first write: %v", err)
	}
	// A second write replaces what the first wrote.
	if _, err := render.Plots(dir, runs, report.Options{}); err != nil {
		t.Fatalf("writing over earlier plots: %v", err)
	}
	victim := filepath.Join(root, "victim")
	for _, name := range []string{runs[0].Cell.Dir() + "_rtt-cdf.png", render.PlotIndex} {
		if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, name)
		os.Remove(link)
		if err := os.Symlink(victim, link); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		_, err := render.Plots(dir, runs, report.Options{})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s a link: %v, want a refusal", name, err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep me" {
			t.Errorf("%s a link: the file it points to was overwritten", name)
		}
		os.Remove(link)
	}
}
