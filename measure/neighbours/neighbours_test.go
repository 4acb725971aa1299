package neighbours

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

// crossRun is a measured run with one down cross flow that started at
// t0+startOff and delivered bins[i] bytes in its bin i; the session's
// samples start at t0, warm-up 1 s, duration 3 s.
func crossRun(cell results.Cell, arm string, repeat int, startOff time.Duration, bins []int64) results.Run {
	return results.Run{Schema: results.SchemaVersion, Cell: cell, Arm: arm, Repeat: repeat,
		Started: t0, Finished: t0.Add(4 * time.Second), SamplesStart: t0, Warmup: time.Second, Duration: 3 * time.Second,
		ThroughputMbit: 4,
		Link: results.Link{Cross: []shapedlink.CrossReport{{Dir: "down", Kind: "cubic", Started: t0.Add(startOff),
			BinMs: 100, Bins: bins, SentPackets: 200, Retransmits: 3}}}}
}

func TestWindow(t *testing.T) {
	// 40 bins from t0: the window [1 s, 3 s] holds bins 10..29. Bins
	// outside it carry a huge count that must not show.
	bins := make([]int64, 40)
	for i := range bins {
		bins[i] = 1e9
		if i >= 10 && i < 30 {
			bins[i] = 50_000 // 4 Mbit/s in 100 ms
		}
	}
	cell := results.Cell{Profile: "80:10,down.cross=1xcubic", RTTms: 80, RateMbit: 10, CC: "reno"}
	f, err := Measure(crossRun(cell, "tcp", 1, 0, bins))
	if err != nil || f.Unmeasured != "" {
		t.Fatalf("Measure: %v %q", err, f.Unmeasured)
	}
	if math.Abs(f.CrossMbit-4) > 1e-9 || math.Abs(f.Flows[0].Mbit-4) > 1e-9 {
		t.Errorf("cross goodput %v (flow %v), want 4: bins outside the window counted", f.CrossMbit, f.Flows[0].Mbit)
	}
	if !f.From.Equal(t0.Add(time.Second)) || !f.To.Equal(t0.Add(3*time.Second)) {
		t.Errorf("window %v..%v, want t0+1s..t0+3s", f.From, f.To)
	}
	if math.Abs(f.Jain-1) > 1e-9 {
		t.Errorf("Jain %v for 4 and 4 Mbit/s, want 1", f.Jain)
	}
	if math.Abs(f.CrossRetransmitPct-1.5) > 1e-9 {
		t.Errorf("cross retransmissions %v%%, want 1.5%%", f.CrossRetransmitPct)
	}
	// A flow started 50 ms late: a bin straddling either edge is out, so
	// bins 10..28 (1.05 s to 2.95 s) count.
	f, _ = Measure(crossRun(cell, "tcp", 1, 50*time.Millisecond, bins))
	if math.Abs(f.CrossMbit-4) > 1e-9 {
		t.Errorf("shifted flow: cross goodput %v, want 4", f.CrossMbit)
	}
	// A flow whose bins end before the window: not measured, said why.
	f, _ = Measure(crossRun(cell, "tcp", 1, 0, bins[:9]))
	if f.Unmeasured == "" || f.CrossMbit != 0 {
		t.Errorf("flow outside the window measured: %+v", f)
	}
	// No samples start: no window, said so.
	r := crossRun(cell, "tcp", 1, 0, bins)
	r.SamplesStart = time.Time{}
	if f, _ := Measure(r); !strings.Contains(f.Unmeasured, "samples_start") {
		t.Errorf("no samples start: unmeasured %q", f.Unmeasured)
	}
}

func TestReference(t *testing.T) {
	bins := func(mbit float64) []int64 {
		b := make([]int64, 40)
		for i := range b {
			b[i] = int64(mbit * 1e6 / 80)
		}
		return b
	}
	reno := results.Cell{Profile: "80:10,down.cross=1xcubic", RTTms: 80, RateMbit: 10, CC: "reno"}
	bbr := reno
	bbr.CC, bbr.Sensitivity = "bbr", true
	other := results.Cell{Profile: "30:50,down.cross=1xcubic", RTTms: 30, RateMbit: 50, CC: "bbr", Sensitivity: true}
	failed := crossRun(reno, "tcp", 2, 0, bins(9))
	failed.Failed = "the link broke"
	plain := crossRun(reno, "quic", 3, 0, bins(1))
	plain.Link.Cross = nil
	runs := []results.Run{
		crossRun(reno, "tcp", 1, 0, bins(5)), failed, plain,
		crossRun(reno, "quic", 1, 0, bins(4)),
		crossRun(bbr, "tcp", 1, 0, bins(2)),
		crossRun(other, "tcp", 1, 0, bins(3)),
	}
	tb, err := Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Skipped != 1 {
		t.Errorf("skipped %d runs, want the one without cross flows", tb.Skipped)
	}
	want := map[string]struct {
		ref   string
		ratio float64
	}{
		reno.Dir() + " tcp":  {reno.Dir(), 1},
		reno.Dir() + " quic": {reno.Dir(), 0.8},
		bbr.Dir() + " tcp":   {reno.Dir(), 0.4}, // bbr's tcp against reno's tcp
		other.Dir() + " tcp": {"", 0},           // no reno cell at 30:50
	}
	if len(tb.Arms) != len(want) {
		t.Fatalf("%d arms, want %d", len(tb.Arms), len(want))
	}
	for _, a := range tb.Arms {
		w, ok := want[a.Cell.Dir()+" "+a.Arm]
		if !ok {
			t.Errorf("unexpected arm %s %s", a.Cell.Dir(), a.Arm)
			continue
		}
		if a.Reference != w.ref || math.Abs(a.CrossRatio-w.ratio) > 1e-9 {
			t.Errorf("%s %s: reference %q ratio %v, want %q %v", a.Cell.Dir(), a.Arm, a.Reference, a.CrossRatio, w.ref, w.ratio)
		}
		if a.Cell == reno && a.Arm == "tcp" && (a.Runs != 2 || a.Failed != 1 || a.Measured != 1) {
			t.Errorf("reno tcp: %d runs, %d failed, %d measured; want 2, 1, 1", a.Runs, a.Failed, a.Measured)
		}
	}
	var md bytes.Buffer
	if err := tb.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| no reference |") || !strings.Contains(md.String(), "tcp on reno, "+reno.Dir()) {
		t.Errorf("markdown does not say which reference:\n%s", md.String())
	}
	if tb, err := Build([]results.Run{plain}); tb != nil || err != nil {
		t.Errorf("runs without cross flows: %v, %v; want nil, nil", tb, err)
	}
}

// TestFixture reads two runs recorded at 80:10 beside one cubic flow
// (tcp on reno, then quic) and checks the figures against their records.
func TestFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/two_runs.json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []results.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := r.Validate(); err != nil {
			t.Fatalf("fixture %s: %v", r.Arm, err)
		}
	}
	tb, err := Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Arms) != 2 || tb.Arms[0].Arm != "tcp" || tb.Arms[1].Arm != "quic" {
		t.Fatalf("arms %+v", tb.Arms)
	}
	tc, q := tb.Arms[0], tb.Arms[1]
	// tcp's server: 46 retransmitted of 2921 segments over 5 connections;
	// quic's: 26 lost of 2877 packets.
	if math.Abs(tc.SessionRetransmitPct-100*46.0/2921) > 1e-9 || math.Abs(q.SessionRetransmitPct-100*26.0/2877) > 1e-9 {
		t.Errorf("session retransmissions tcp %v%%, quic %v%%", tc.SessionRetransmitPct, q.SessionRetransmitPct)
	}
	// The cubic flow's own count: 72 of 7437, 57 of 7596.
	if math.Abs(tc.CrossRetransmitPct-100*72.0/7437) > 1e-9 || math.Abs(q.CrossRetransmitPct-100*57.0/7596) > 1e-9 {
		t.Errorf("cross retransmissions tcp %v%%, quic %v%%", tc.CrossRetransmitPct, q.CrossRetransmitPct)
	}
	for _, a := range tb.Arms {
		r := runs[0]
		if a.Arm == "quic" {
			r = runs[1]
		}
		c := r.Link.Cross[0]
		want := c.GoodputMbit(r.SamplesStart.Add(r.Warmup), r.SamplesStart.Add(r.Duration))
		if want <= 0 || math.Abs(a.CrossMbit-want) > 1e-9 {
			t.Errorf("%s: cross %v Mbit/s, the record's own reading %v", a.Arm, a.CrossMbit, want)
		}
		if a.CrossMbit+a.SessionMbit > 10.5 {
			t.Errorf("%s: session %v and cross %v Mbit/s exceed the 10 Mbit/s link", a.Arm, a.SessionMbit, a.CrossMbit)
		}
		j, _ := stats.JainIndex([]float64{a.SessionMbit, a.CrossMbit})
		if math.Abs(a.Jain-j) > 1e-9 || a.Jain >= 1 || a.Jain <= 0.5 {
			t.Errorf("%s: Jain %v", a.Arm, a.Jain)
		}
	}
	if q.Reference != tc.Cell.Dir() || math.Abs(q.CrossRatio-q.CrossMbit/tc.CrossMbit) > 1e-9 {
		t.Errorf("quic's reference %q ratio %v", q.Reference, q.CrossRatio)
	}
	var csvOut bytes.Buffer
	if err := tb.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(csvOut.String(), "\n"); lines != 3 {
		t.Errorf("CSV has %d lines, want a header and a row per run and flow:\n%s", lines, csvOut.String())
	}
}

func TestBadRecord(t *testing.T) {
	cell := results.Cell{Profile: "80:10,down.cross=1xcubic", RTTms: 80, RateMbit: 10, CC: "reno"}
	r := crossRun(cell, "tcp", 1, 0, make([]int64, 40))
	r.Server = json.RawMessage(`{"tcp": "not a list"}`)
	if _, err := Build([]results.Run{r}); err == nil || !strings.Contains(err.Error(), "r1") {
		t.Errorf("unreadable server state: %v", err)
	}
	r.Server = nil
	r.Link.Cross[0].BinMs = 0
	if f, err := Measure(r); err != nil || !strings.Contains(f.Unmeasured, "bin width") {
		t.Errorf("zero bin width: %q, %v", f.Unmeasured, err)
	}
	// Every share zero: Jain's index is undefined, said so.
	r.Link.Cross[0].BinMs = 100
	r.ThroughputMbit = 0
	if f, _ := Measure(r); f.Unmeasured == "" {
		t.Error("all-zero shares measured")
	}
}
