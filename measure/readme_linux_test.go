package measure_test

import (
	"context"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
)

// README.md's "Embedding the link" shows this test as it is here
// (TestREADMEShowsCompiledCode keeps the two the same).

func TestQUICOverTheLink(t *testing.T) {
	link := shapedlinktest.New(t, "80:10:1")
	cfg := spicelike.Defaults()
	cfg.Duration, cfg.Warmup = 5*time.Second, time.Second
	r, err := measure.Run(context.Background(), measure.OverLink(link), measure.QUIC, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := stats.SummariseRepeat(r.Repeat, cfg.Warmup)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("p95 %v over %d round trips, %.1f Mbit/s", s.P95, s.N, r.Repeat.ThroughputMbit)
}
