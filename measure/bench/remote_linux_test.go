package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// TestTwoHostMatrixAgreesWithSingleHost stands two network namespaces in
// for two hosts, with a shaped 20 ms / 10 Mbit link between them: the
// daemon listens in the server's namespace (and starts its servers
// there), the driver and its clients run in the client's. A quick matrix
// in two-host mode must give results in the usual layout with both ends
// recorded, and agree with the single-host matrix of the same profile
// within a loose bound: per arm, the median over repeats of each run's
// median round trip within 5 ms + 20%, and of its throughput within 30%.
// A driver with the wrong secret is refused before anything runs.
func TestTwoHostMatrixAgreesWithSingleHost(t *testing.T) {
	shapedlinktest.Need(t)
	link := shapedlinktest.New(t, "20:10")
	td := startTestDaemon(t, twohost.DaemonConfig{
		Addr:      net.JoinHostPort(link.ServerAddr().String(), "7390"),
		Namespace: link.Server(),
	})
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 5*time.Second, time.Second
	arms := []measure.Arm{"tcp", "quic"}
	ctx := context.Background()

	// The wrong secret first: refused before any run, nothing recorded.
	bad := &plan.Matrix{CCs: []string{plan.MatchedCC}, Arms: arms, Repeats: 2, Workload: w, Workdir: t.TempDir(),
		Remote: td.Addr().String()}
	err := Run(ctx, bad, Options{Remote: &twohost.Client{Addr: td.Addr().String(), Secret: []byte("the wrong secret, long enough"), Local: link.Client()}})
	if !errors.Is(err, twohost.ErrRefused) || !strings.Contains(err.Error(), "wrong proof") {
		t.Errorf("the wrong secret: %v, want a refusal saying the proof was wrong", err)
	}
	if runs, err := results.Load(bad.Workdir); err == nil {
		t.Errorf("a refused matrix recorded %d runs", len(runs))
	}

	two := &plan.Matrix{CCs: []string{plan.MatchedCC}, Arms: arms, Repeats: 2, Workload: w, Workdir: t.TempDir(),
		Remote: td.Addr().String()}
	if err := Run(ctx, two, Options{Remote: &twohost.Client{Addr: td.Addr().String(), Secret: testSecret, Local: link.Client()}}); err != nil {
		t.Fatalf("two-host matrix: %v\ndaemon log:\n%s", err, td.log.String())
	}
	tworuns, err := results.Load(two.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tworuns) != 4 {
		t.Fatalf("%d two-host runs recorded, want 4 (2 arms x 2 repeats)", len(tworuns))
	}
	for _, r := range tworuns {
		name := fmt.Sprintf("%s/%s/r%d", r.Cell.Dir(), r.Arm, r.Repeat)
		if r.Failed != "" {
			t.Errorf("%s failed: %s", name, r.Failed)
			continue
		}
		if r.Cell.Profile != results.PathProfile || r.Cell.Dir() != "path_reno" {
			t.Errorf("%s: cell %+v, want the path cell", name, r.Cell)
		}
		dir := results.RunDir(two.Workdir, r.Cell, r.Arm, r.Repeat)
		for _, f := range []string{"run.json", "server.json", "server.log", "client.json", "client.log"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if len(r.Server) == 0 || len(r.Client) == 0 {
			t.Errorf("%s: a transport state is missing (server %d bytes, client %d bytes)", name, len(r.Server), len(r.Client))
		}
		for _, u := range []*results.Usage{r.ServerUsage, r.ClientUsage} {
			if u == nil || u.CPU() <= 0 || u.MaxRSSKiB <= 0 {
				t.Errorf("%s: process usage missing: %+v", name, u)
			}
		}
		if !slices.ContainsFunc(r.CongestionControl, func(s string) bool { return strings.HasPrefix(s, "server: ") }) ||
			!slices.ContainsFunc(r.CongestionControl, func(s string) bool { return strings.HasPrefix(s, "client: ") }) {
			t.Errorf("%s: congestion control not recorded for both ends: %q", name, r.CongestionControl)
		}
		if r.Arm == string(transport.ArmQUIC) && len(r.QUICGSO) != 2 {
			t.Errorf("%s: %d QUIC GSO states, want both ends'", name, len(r.QUICGSO))
		}
		if r.GSOQueue != nil || r.GSOCounters != nil {
			t.Errorf("%s: a GSO check from a queue that two-host mode does not have", name)
		}
		p := r.Link.Probe
		if p == nil {
			t.Errorf("%s: no path probe recorded", name)
			continue
		}
		// The fastest of 50 echoes, not the median: a loaded host delays
		// most of them (p50 48-58 ms on this 20 ms link at load 40).
		if p.Sent != probeCount || p.Answered < probeCount*9/10 || p.RTTMinMs < 20 || p.RTTMinMs > 40 {
			t.Errorf("%s: probe of a 20 ms lossless link: %+v", name, *p)
		}
	}

	// The summary and the plots take the path's cell as any other.
	var md bytes.Buffer
	if err := render.Markdown(&md, tworuns, report.Options{Source: two.Workdir}); err != nil {
		t.Errorf("summary of the two-host runs: %v", err)
	} else if !strings.Contains(md.String(), "path between two hosts, as found") {
		t.Errorf("the summary does not name the path's cell:\n%s", md.String())
	}
	if _, err := render.Plots(t.TempDir(), tworuns, report.Options{Source: two.Workdir}); err != nil {
		t.Errorf("plots of the two-host runs: %v", err)
	}

	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	one := &plan.Matrix{Profiles: []shapedlink.Profile{p}, Losses: []float64{0},
		CCs: []string{plan.MatchedCC}, Arms: arms, Repeats: 2, Workload: w, Workdir: t.TempDir()}
	if err := Run(ctx, one, Options{}); err != nil {
		t.Fatalf("single-host matrix: %v", err)
	}
	oneruns, err := results.Load(one.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range arms {
		tp50, tmbit := cellFigures(t, tworuns, string(arm), w.Warmup)
		op50, ombit := cellFigures(t, oneruns, string(arm), w.Warmup)
		t.Logf("%s: median round trip %.1f ms two-host, %.1f ms single-host; throughput %.2f Mbit/s two-host, %.2f single-host",
			arm, tp50, op50, tmbit, ombit)
		if math.Abs(tp50-op50) > 5+0.2*op50 {
			t.Errorf("%s: median round trip %.1f ms two-host against %.1f ms single-host: more than 5 ms + 20%% apart", arm, tp50, op50)
		}
		if math.Abs(tmbit-ombit) > 0.3*ombit {
			t.Errorf("%s: throughput %.2f Mbit/s two-host against %.2f single-host: more than 30%% apart", arm, tmbit, ombit)
		}
	}
}

// cellFigures are, over arm's runs, the median of each run's median round
// trip after warm-up (ms) and the median throughput (Mbit/s).
func cellFigures(t *testing.T, runs []results.Run, arm string, warmup time.Duration) (p50Ms, mbit float64) {
	t.Helper()
	var p50s, tputs []float64
	for _, r := range runs {
		if r.Arm != arm || r.Failed != "" {
			continue
		}
		var rtts []float64
		for _, s := range r.Samples {
			if s.Offset >= warmup {
				rtts = append(rtts, float64(s.RTT)/float64(time.Millisecond))
			}
		}
		m, err := stats.P50(rtts)
		if err != nil {
			t.Fatalf("%s r%d: %v", arm, r.Repeat, err)
		}
		p50s = append(p50s, m)
		tputs = append(tputs, r.ThroughputMbit)
	}
	if len(p50s) == 0 {
		t.Fatalf("no measured %s runs", arm)
	}
	return median(p50s), median(tputs)
}

// median is the middle value, or the mean of the two middle values.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// TestTwoHostOnLoopback runs a tiny two-host matrix with both ends in this
// process's own network namespace, over loopback: the way the commands
// run, with no namespace given to the daemon or the driver.
func TestTwoHostOnLoopback(t *testing.T) {
	td := startTestDaemon(t, twohost.DaemonConfig{})
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	m := &plan.Matrix{CCs: []string{plan.MatchedCC}, Arms: []measure.Arm{"tcp", "quic"}, Repeats: 1, Workload: w,
		Workdir: t.TempDir(), Remote: td.Addr().String()}
	if err := Run(context.Background(), m, Options{Remote: td.remote(testSecret)}); err != nil {
		t.Fatalf("%v\ndaemon log:\n%s", err, td.log.String())
	}
	runs, err := results.Load(m.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		if r.Failed != "" || len(r.Server) == 0 || r.ServerUsage == nil || r.Link.Probe == nil || r.Link.Probe.Answered == 0 || r.ThroughputMbit <= 0 {
			t.Errorf("%s: failed %q, server state %d bytes, server usage %v, probe %+v, %.1f Mbit/s",
				r.Arm, r.Failed, len(r.Server), r.ServerUsage, r.Link.Probe, r.ThroughputMbit)
		}
		// No host state, but the driver's code: its commit, or why not.
		var host struct {
			Module        string `json:"module"`
			Commit        string `json:"commit"`
			CommitMissing string `json:"commit_missing"`
		}
		if err := json.Unmarshal(r.Host, &host); err != nil || host.Module == "" || host.Commit == "" && host.CommitMissing == "" {
			t.Errorf("%s: the record's host %s (%v) does not say which code ran", r.Arm, r.Host, err)
		}
	}
}
