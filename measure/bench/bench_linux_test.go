package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// The runs re-execute the test binary as their server and client.
func TestMain(m *testing.M) {
	MaybeRunRole()
	os.Exit(m.Run())
}

func tinyMatrix(t *testing.T, arms ...measure.Arm) *plan.Matrix {
	t.Helper()
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	return &plan.Matrix{
		Profiles: []shapedlink.Profile{p},
		Losses:   []float64{1}, CCs: []string{plan.MatchedCC}, Arms: arms, Repeats: 1,
		Workload: w, Workdir: t.TempDir(),
	}
}

// TestMatrixEndToEnd runs every arm across an emulated lossy link, in
// separate server and client processes, and checks what was recorded.
func TestMatrixEndToEnd(t *testing.T) {
	shapedlinktest.Need(t)
	m := tinyMatrix(t, "tcp", "quic", "quic-per-channel", "quic-priority")
	m.Link.EmulatorKeepAwake, m.Link.EmulatorDepartureWindow = true, shapedlink.DefaultDepartureWindow // the commands' defaults
	if err := Run(context.Background(), m, Options{}); err != nil {
		t.Fatal(err)
	}
	runs, err := results.Load(m.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs recorded, want 4", len(runs))
	}
	for _, r := range runs {
		if r.Failed != "" {
			t.Errorf("%s failed: %s", r.Arm, r.Failed)
			continue
		}
		// 2 s after warm-up at 20 ms RTT + 20 ms gap is up to 50 samples;
		// a loss costs QUIC a few hundred ms, and CI runs packages side by
		// side on two cores, so the bound is loose.
		n := 0
		for _, s := range r.Samples {
			if s.Offset >= m.Workload.Warmup {
				n++
				if s.RTT < 20*time.Millisecond {
					t.Errorf("%s: round trip %v shorter than the 20 ms link", r.Arm, s.RTT)
				}
			}
		}
		if n < 5 {
			t.Errorf("%s: only %d samples after warm-up", r.Arm, n)
		}
		if r.ThroughputMbit <= 0.5 || r.ThroughputMbit > 10 {
			t.Errorf("%s: throughput %.2f Mbit/s on a 10 Mbit link", r.Arm, r.ThroughputMbit)
		}
		if r.ConnectTime < 20*time.Millisecond {
			t.Errorf("%s: connect time %v below one round trip", r.Arm, r.ConnectTime)
		}
		if r.Link.Backend == "" || len(r.Link.Applied) != 2 || len(r.Host) == 0 || len(r.Server) == 0 || len(r.Client) == 0 {
			t.Errorf("%s: link, host or transport state missing: %+v", r.Arm, r.Link)
		}
		if l := linkJSON(t, m.Workdir, r); bytes.Contains(l, []byte(`"offload"`)) {
			t.Errorf("%s: a wire-sized link's record names an offload mode: %s", r.Arm, l)
		}
		if r.Link.Backend == "emulator" {
			if sh := r.Link.Shaper; sh == nil || len(sh.Directions) != 2 || sh.Directions[0].Forwarded == 0 || sh.Directions[1].Forwarded == 0 {
				t.Errorf("%s: the emulator's counters are missing from the run record: %+v", r.Arm, r.Link.Shaper)
			} else if len(sh.KeepAwakeCPUs) == 0 || sh.DepartureWindowMs != 0.2 {
				t.Errorf("%s: the run record's emulator settings are keep-awake CPUs %v, window %v ms; want CPUs and 0.2 ms", r.Arm, sh.KeepAwakeCPUs, sh.DepartureWindowMs)
			}
		}
		for _, u := range []*results.Usage{r.ServerUsage, r.ClientUsage} {
			if u == nil || u.CPU() <= 0 || u.MaxRSSKiB <= 0 {
				t.Errorf("%s: process usage missing: %+v", r.Arm, u)
			}
		}
		if r.BulkBytesTotal < r.BulkBytes {
			t.Errorf("%s: bulk bytes total %d below the window's %d", r.Arm, r.BulkBytesTotal, r.BulkBytes)
		}
		if r.Arm == string(transport.ArmTCP) {
			if r.GSOQueue != nil {
				t.Errorf("tcp arm has a GSO verdict")
			}
			continue
		}
		if r.GSOCounters == nil || r.GSOCounters.Verdict != gsocheck.Off {
			t.Errorf("%s: egress counters do not prove GSO off: %+v", r.Arm, r.GSOCounters)
		}
		for _, g := range r.QUICGSO {
			if g {
				t.Errorf("%s: quic-go reported GSO in use", r.Arm)
			}
		}
		if _, err := os.Stat(filepath.Join(m.Workdir, r.Cell.Dir(), r.Arm, "r1", "queue.csv")); err != nil {
			t.Errorf("%s: no queue samples: %v", r.Arm, err)
		}
	}

	// A rerun finds everything done and measures nothing.
	start := time.Now()
	if err := Run(context.Background(), m, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("rerun of a complete matrix took %v: it should skip every run", d)
	}

	// A work directory made for another matrix is refused.
	other := *m
	other.Repeats = 2
	if err := Run(context.Background(), &other, Options{}); err == nil {
		t.Error("a different matrix was run into the same work directory")
	}
}

// TestInterruptedRunIsNotRecorded cancels a run half way: nothing is
// recorded for it, so a rerun does it again.
func TestInterruptedRunIsNotRecorded(t *testing.T) {
	shapedlinktest.Need(t)
	m := tinyMatrix(t, "quic")
	m.Workload.Duration = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	err := Run(ctx, m, Options{})
	if !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("err = %v, want results.ErrInterrupted", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("interruption took %v to take effect", d)
	}
	rc := m.Plan()[0]
	if _, st, _ := results.Check(rc.Dir(), rc.Cell, string(rc.Arm), rc.Repeat); st == results.Measured {
		t.Error("an interrupted run was recorded as done")
	}
}

func TestValidateRefusesBadMatrix(t *testing.T) {
	m := tinyMatrix(t, "tcp", "sctp")
	m.CCs = []string{"no-such-cc"}
	m.Repeats = 0
	err := m.Validate()
	if err == nil {
		t.Fatal("bad matrix accepted")
	}
	for _, want := range []string{"sctp", "no-such-cc", "repeats"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
}

// TestFailedAndCorruptRunsAreRedone: a failed record is kept for the report
// but is not done, and a record that does not validate is not done either;
// resume sets both aside under names that say so and measures the runs.
func TestFailedAndCorruptRunsAreRedone(t *testing.T) {
	shapedlinktest.Need(t)
	m := tinyMatrix(t, "tcp", "quic")
	plan := m.Plan()
	if err := os.MkdirAll(m.Workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// As an earlier invocation would have left them: the tcp run failed,
	// the quic run's record was cut short.
	failed := results.Run{Schema: results.SchemaVersion, Cell: plan[0].Cell, Arm: string(plan[0].Arm), Repeat: 1,
		Started: time.Now(), Finished: time.Now(), Duration: m.Workload.Duration, Warmup: m.Workload.Warmup,
		Failed: "building the link: no netem"}
	if err := results.WriteJSON(filepath.Join(plan[0].Dir(), results.RunFile), failed); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(plan[1].Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plan[1].Dir(), results.RunFile), []byte(`{"schema": 1, "arm": "qu`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), m, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, rc := range plan {
		if _, st, err := results.Check(rc.Dir(), rc.Cell, string(rc.Arm), rc.Repeat); st != results.Measured {
			t.Errorf("%s: %v (%v) after resume, want measured", rc.Arm, st, err)
		}
	}
	for _, aside := range []string{plan[0].Dir() + ".failed-1", plan[1].Dir() + ".corrupt-1"} {
		if _, err := os.Stat(filepath.Join(aside, results.RunFile)); err != nil {
			t.Errorf("the earlier record was not kept aside: %v", err)
		}
	}
	runs, err := results.Load(m.Workdir)
	if err != nil || len(runs) != 2 {
		t.Errorf("Load: %d runs, %v; want the 2 measured ones", len(runs), err)
	}
}

// TestFailedRunsAreCountedAndRetried: a matrix whose runs fail says how
// many, records them as failed, and a rerun retries them; a rerun with
// another backend is another matrix.
func TestFailedRunsAreCountedAndRetried(t *testing.T) {
	shapedlinktest.Need(t)
	p, _ := shapedlink.ParseProfile("10:100")
	if l, err := shapedlink.New(context.Background(), p, shapedlink.Options{Backend: shapedlink.BackendNetem}); err == nil {
		l.Close()
		t.Skip("this kernel has netem; the test needs a backend that fails")
	}
	m := tinyMatrix(t, "tcp")
	m.Link.Backend = shapedlink.BackendNetem
	for attempt := 1; attempt <= 2; attempt++ {
		err := Run(context.Background(), m, Options{})
		var rf *runsFailedError
		if !errors.As(err, &rf) || rf.Failed != 1 || rf.Total != 1 {
			t.Fatalf("attempt %d: %v, want 1 of 1 runs failed", attempt, err)
		}
		rc := m.Plan()[0]
		run, st, _ := results.Check(rc.Dir(), rc.Cell, string(rc.Arm), rc.Repeat)
		if st != results.FailedRun || !strings.Contains(run.Failed, "netem") {
			t.Errorf("attempt %d: record %v, failed %q", attempt, st, run.Failed)
		}
	}
	if _, err := os.Stat(m.Plan()[0].Dir() + ".failed-1"); err != nil {
		t.Errorf("the second attempt did not retry the first (nothing set aside): %v", err)
	}
	other := *m
	other.Link.Backend = shapedlink.BackendAuto
	if err := Run(context.Background(), &other, Options{}); !errors.Is(err, plan.ErrWorkdir) || !strings.Contains(err.Error(), "backend") {
		t.Errorf("another backend into the same work directory: %v, want a refusal naming the backend", err)
	}
}

// linkJSON is the link object of r's run.json as written, compacted.
func linkJSON(t *testing.T, workdir string, r results.Run) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(results.RunDir(workdir, r.Cell, r.Arm, r.Repeat), results.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Link json.RawMessage `json:"link"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw.Link); err != nil {
		t.Fatal(err)
	}
	return c.Bytes()
}
