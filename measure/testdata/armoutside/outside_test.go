package armoutside

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// lowat is this module's arm: one TCP connection per channel, as the tcp
// arm makes them, with TCP_NOTSENT_LOWAT at 16 KiB on every socket, which
// the built-in arms leave at the host's default.
type lowat struct{}

func (lowat) Name() string { return "tcp-lowat" }
func (lowat) QUIC() bool   { return false }

func (lowat) Listen(ctx context.Context, addr string, o transport.Options) (measure.ArmListener, error) {
	o.NotSentLowat = 16 << 10
	return measure.TCP.Listen(ctx, addr, o)
}

func (lowat) Dial(ctx context.Context, addr string, o transport.Options) (measure.ArmSession, error) {
	o.NotSentLowat = 16 << 10
	return measure.TCP.Dial(ctx, addr, o)
}

// ownQUIC is this module's QUIC arm: the quic arm under a name of its
// own, saying that it carries QUIC (Transport.QUIC), so that the matrix
// leaves its congestion control to quic-go, checks its offload evidence,
// and the summary reads it as QUIC.
type ownQUIC struct{}

func (ownQUIC) Name() string { return "quic-own" }
func (ownQUIC) QUIC() bool   { return true }

func (ownQUIC) Listen(ctx context.Context, addr string, o transport.Options) (measure.ArmListener, error) {
	return measure.QUIC.Listen(ctx, addr, o)
}

func (ownQUIC) Dial(ctx context.Context, addr string, o transport.Options) (measure.ArmSession, error) {
	return measure.QUIC.Dial(ctx, addr, o)
}

// Prepare gives both ends the certificate the quic arm would.
func (ownQUIC) Prepare(o transport.Options, w spicelike.Config) (server, client transport.Options, err error) {
	return measure.PrepareOptions(measure.QUIC, w, o)
}

// Registered in init, so that the server and client processes the matrix
// starts (this test binary, re-executed) have them too.
func init() {
	for _, a := range []measure.Transport{lowat{}, ownQUIC{}} {
		if err := measure.Register(a); err != nil {
			panic(err)
		}
	}
}

func TestMain(m *testing.M) {
	bench.MaybeRunRole() // in a run's server or client process, be it and exit
	os.Exit(m.Run())
}

// runMatrix runs a one-cell matrix of arms (oneCell) and returns it.
func runMatrix(t *testing.T, repeats int, arms ...measure.Arm) *plan.Matrix {
	t.Helper()
	m := oneCell(t, repeats, arms...)
	if err := bench.Run(context.Background(), m, bench.Options{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// oneCell is a one-cell matrix of arms: 20:10 at 1% loss, short runs.
func oneCell(t *testing.T, repeats int, arms ...measure.Arm) *plan.Matrix {
	t.Helper()
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	m := &plan.Matrix{Profiles: []shapedlink.Profile{p}, Losses: []float64{1},
		CCs: []string{plan.MatchedCC}, Arms: arms, Repeats: repeats, Workload: w, Workdir: t.TempDir()}
	return m
}

// summary is the markdown summary of a matrix's work directory.
func summary(t *testing.T, m *plan.Matrix) string {
	t.Helper()
	l, err := plan.LoadWorkdir(m.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	if err := render.Markdown(&sum, l.Runs, report.Options{Source: m.Workdir}); err != nil {
		t.Fatalf("the summary: %v", err)
	}
	return sum.String()
}

func TestOwnArmInAMatrix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the matrix builds network namespaces, which needs root: run this test as root")
	}
	m := runMatrix(t, 2, "tcp", "tcp-lowat")
	sum := summary(t, m)
	for _, want := range []string{"| 1% | tcp-lowat |", "### Reading them: tcp-lowat against TCP"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the summary lacks %q:\n%s", want, sum)
		}
	}
	t.Log(sum)
}

// TestOwnQUICArm: an importer's QUIC arm runs as QUIC (no TCP congestion
// control asked of it), its records say so, and the summary reads its
// offload evidence as a QUIC arm's.
func TestOwnQUICArm(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the matrix builds network namespaces, which needs root: run this test as root")
	}
	if own, lowat := measure.Arm("quic-own"), measure.Arm("tcp-lowat"); !own.QUIC() || lowat.QUIC() {
		t.Fatalf("QUIC: quic-own %v, tcp-lowat %v; want true and false", own.QUIC(), lowat.QUIC())
	}
	m := runMatrix(t, 1, "tcp", "quic-own")
	runs, err := results.Load(m.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Arm == "quic-own" && (r.Failed != "" || !r.QUIC || r.GSOCounters == nil) {
			t.Errorf("quic-own's run: failed %q, recorded as QUIC %v, offload evidence %v; want it measured as QUIC, its offload checked", r.Failed, r.QUIC, r.GSOCounters)
		}
	}
	sum := summary(t, m)
	if !strings.Contains(sum, "| quic-own |") || !strings.Contains(sum, "offload") {
		t.Errorf("the summary does not read quic-own as QUIC:\n%s", sum)
	}
}

// TestOwnAxisInAMatrix: this module's own axis (axis.go, and its command
// cmd/echosizes) from its flag's Set to the summary: a bad size is refused with
// the flag's name, each size is a cell of its own that sets the run's echo
// size, and the summary reads the cells apart.
func TestOwnAxisInAMatrix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the matrix builds network namespaces, which needs root: run this test as root")
	}
	parse := func(sizes string) (*plan.Matrix, error) {
		m := oneCell(t, 1, "tcp")
		if err := EchoSizesFlag("64 1024").Set(m, sizes); err != nil {
			return nil, err
		}
		return m, m.Validate()
	}
	if _, err := parse("64 8"); err == nil || !strings.Contains(err.Error(), "-echo-sizes") {
		t.Errorf("-echo-sizes \"64 8\": %v, want a refusal naming -echo-sizes", err)
	}
	m, err := parse("64 1024")
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range m.Plan() {
		if _, v, _ := strings.Cut(rc.Cell.Axes, "echo="); v != strconv.Itoa(rc.Workload.EchoSize) {
			t.Errorf("cell %s: echo size %d, want the cell's %q", rc.Cell.Dir(), rc.Workload.EchoSize, v)
		}
	}
	if err := bench.Run(context.Background(), m, bench.Options{}); err != nil {
		t.Fatal(err)
	}
	sum := summary(t, m)
	for _, want := range []string{"echo 64", "echo 1024"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the summary lacks the cell %q:\n%s", want, sum)
		}
	}
}
