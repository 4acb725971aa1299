package pathchange

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

func validConfig(t *testing.T) Config {
	t.Helper()
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 20*time.Second, 2*time.Second
	return Config{Profile: p, Losses: []float64{0, 1}, Arms: []transport.Arm{transport.ArmTCP, transport.ArmQUIC}, Repeats: 2,
		Workload: w, Linger: time.Second, Workdir: t.TempDir(),
		Change: Change{At: 10 * time.Second, Order: OrderMakeFirst, ProbeTimeout: time.Second}}
}

// TestValidate: a Config a Go caller got wrong is refused with every
// problem named by its field, before anything runs.
func TestValidate(t *testing.T) {
	if err := validConfig(t).validate(); err != nil {
		t.Fatalf("a valid config: %v", err)
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Losses = []float64{100} }, "loss 100%"},
		{func(c *Config) { c.Losses = nil }, "(Losses)"},
		{func(c *Config) { c.Arms = []transport.Arm{"udp"} }, "udp"},
		{func(c *Config) { c.Repeats = 0 }, "Repeats 0"},
		{func(c *Config) { c.Change.Order = "sideways" }, `Change.Order "sideways"`},
		{func(c *Config) { c.Change.At = 30 * time.Second }, "Change.At 30s"},
		{func(c *Config) { c.Change.ProbeTimeout = 0 }, "Change.ProbeTimeout"},
		{func(c *Config) { c.Workdir = "" }, "Workdir is empty"},
	} {
		c := validConfig(t)
		tc.change(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want it to mention %q", err, tc.want)
		}
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run accepted a config that validate refuses (%s)", tc.want)
		}
	}
}

// TestRunReanalyse: with Reanalyse, Run measures nothing, recomputes each
// record from its role processes' files, and writes the summary it
// returns.
func TestRunReanalyse(t *testing.T) {
	c := validConfig(t)
	c.Losses, c.Arms, c.Repeats, c.Reanalyse = []float64{1}, []transport.Arm{transport.ArmQUIC}, 1, true
	plan := c.plan()
	if len(plan) != 1 {
		t.Fatalf("%d runs planned, want 1", len(plan))
	}
	rc := plan[0]
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	change := start.Add(10 * time.Second)
	spec := rc.Change
	spec.OldAddr, spec.NewAddr = "198.18.0.2", "198.18.0.3"
	cres := roleResult{SessionUp: start,
		Client: &spicelike.ClientResult{Start: start, End: start.Add(20 * time.Second), Samples: steady(0, 20*time.Second, 80*msec, 20*msec)},
		Events: []Event{{At: change, Side: "client", What: changeBegins + " (make-first): ..."}}}
	sres := roleResult{Server: &spicelike.ServerResult{}, Events: []Event{{At: change.Add(150 * msec), Side: "server", What: "peer address 198.18.0.3:5000"}}}
	link := []Event{{At: change.Add(10 * msec), Side: "link", What: "old client address removed"}}
	dir := rc.dir()
	for name, v := range map[string]any{
		"client-spec.json": map[string]any{"change": spec}, "client.json": cres, "server.json": sres,
		recordFile: Record{Events: link, Failed: "kept"},
	} {
		if err := results.WriteJSON(filepath.Join(dir, name), v); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	want := analyse(rc.Cell, string(rc.Arm), rc.Repeat, spec, cres, sres, link)
	if len(res.Records) != 1 || !res.Records[0].Survived || res.Records[0].Failed != "kept" ||
		res.Records[0].ServerMoved == nil || *res.Records[0].ServerMoved != *want.ServerMoved {
		t.Errorf("records %+v: want the run reanalysed, survived, server moved at %v, its failure kept", res.Records, *want.ServerMoved)
	}
	md, err := os.ReadFile(filepath.Join(c.Workdir, OrderMakeFirst, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != res.Summary || !strings.HasPrefix(res.Summary, "Path change at 10s into a 20s run, profile 80:10, 1 repeats;") {
		t.Errorf("summary.md:\n%s\nResult.Summary:\n%s", md, res.Summary)
	}
	var rows []Row
	if err := results.ReadJSON(filepath.Join(c.Workdir, OrderMakeFirst, "summary.json"), &rows); err != nil || len(rows) != 1 {
		t.Errorf("summary.json: %d rows, %v", len(rows), err)
	}
}
