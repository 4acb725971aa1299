// Package armoutside is a user's module that defines an arm of its own,
// registers it, and measures it beside the built-in tcp arm in a one-cell
// matrix of package bench, summary included.
package armoutside

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// lowat is this module's arm: one TCP connection per channel, as the tcp
// arm makes them, with TCP_NOTSENT_LOWAT at 16 KiB on every socket, which
// the built-in arms leave at the host's default.
type lowat struct{}

func (lowat) Name() string { return "tcp-lowat" }

func (lowat) Listen(ctx context.Context, addr string, o transport.Options) (measure.Listener, error) {
	o.NotSentLowat = 16 << 10
	return measure.TCP.Listen(ctx, addr, o)
}

func (lowat) Dial(ctx context.Context, addr string, o transport.Options) (measure.Session, error) {
	o.NotSentLowat = 16 << 10
	return measure.TCP.Dial(ctx, addr, o)
}

// Registered in init, so that the server and client processes the matrix
// starts (this test binary, re-executed) have it too.
func init() {
	if err := measure.Register(lowat{}); err != nil {
		panic(err)
	}
}

func TestMain(m *testing.M) {
	bench.MaybeRunRole() // in a run's server or client process, be it and exit
	os.Exit(m.Run())
}

func TestOwnArmInAMatrix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the matrix builds network namespaces, which needs root: run this test as root")
	}
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	m := &bench.Matrix{Profiles: []shapedlink.Profile{p}, ProfileText: []string{p.String()}, Losses: []float64{1},
		CCs: []string{bench.MatchedCC}, Arms: []transport.Arm{"tcp", "tcp-lowat"}, Repeats: 2, Workload: w, Workdir: t.TempDir()}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	if code := bench.Summarise(&sum, m.Workdir); code != bench.ExitOK {
		t.Fatalf("the summary exited %d", code)
	}
	for _, want := range []string{"| 1% | tcp-lowat |", "### Reading them: tcp-lowat against TCP"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, sum.String())
		}
	}
	t.Log(sum.String())
}
