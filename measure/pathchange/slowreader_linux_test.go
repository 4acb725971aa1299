package pathchange

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// TestSlowReaderThroughRemoval makes a busy client for sure: from the
// change's start the client keeps an echo that has arrived from its
// workload until the old address is gone (runConfig.holdEcho), so the
// echo is read after the removal although it arrived before. TCP must
// still show an open stall, which an analysis going by read times did
// not (TestPathChangeEndToEnd/tcp-make-first failed so under load);
// QUIC, whose later round trips do complete, must still survive.
func TestSlowReaderThroughRemoval(t *testing.T) {
	shapedlinktest.Need(t)
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup, w.Timeout = 4*time.Second, time.Second, time.Second
	cell := results.Cell{Profile: "20:10", RTTms: 20, RateMbit: 10, CC: "reno"}
	dir := t.TempDir()
	for _, arm := range []transport.Arm{transport.ArmTCP, transport.ArmQUIC} {
		t.Run(string(arm), func(t *testing.T) {
			rc := runConfig{Cell: cell, Profile: p, Arm: arm, Repeat: 1, Workload: w,
				Change:  Change{At: 2 * time.Second, Order: OrderMakeFirst, ProbeTimeout: 2 * time.Second},
				Workdir: filepath.Join(dir, string(arm)), Linger: time.Second, holdEcho: true}
			rec, err := runOne(context.Background(), rc)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range rec.Events {
				t.Logf("%8.3f %-6s %s", e.Offset.Seconds(), e.Side, e.What)
			}
			if !rec.ChangeSeen || rec.Failed != "" {
				t.Fatalf("change seen %v, failed %q: the run did not measure a path change", rec.ChangeSeen, rec.Failed)
			}
			held, removed, released := offsetOf(rec, "client", "interactive read held: an echo arrived"),
				offsetOf(rec, "link", "old client address removed"), offsetOf(rec, "client", "interactive reads released")
			if held == nil || removed == nil || released == nil || !(*held < *removed && *removed < *released) {
				t.Fatalf("echo held at %v, address removed at %v, reads released at %v: want all three in that order", held, removed, released)
			}
			// The held echo: sent before the removal, read after it.
			late := false
			for _, s := range rec.Around {
				late = late || (s.Offset < *removed && s.Offset+s.RTT > *removed)
			}
			if !late {
				t.Fatalf("no echo sent before the removal was read after it (around %v): the hold proved nothing", rec.Around)
			}
			if arm == transport.ArmTCP {
				if rec.Survived || !rec.Stall.Open {
					t.Errorf("TCP: survived %v (%s), stall %+v: want an open stall, not survived", rec.Survived, rec.Why, rec.Stall)
				}
				return
			}
			if !rec.Survived || rec.Stall.Open {
				t.Errorf("QUIC: survived %v (%s), stall %+v: want survived; client errors %v, server errors %v",
					rec.Survived, rec.Why, rec.Stall, rec.ClientErrors, rec.ServerErrors)
			}
		})
	}
}

// offsetOf is the offset from the change of side's first event starting
// with what, or nil.
func offsetOf(rec Record, side, what string) *time.Duration {
	for _, e := range rec.Events {
		if e.Side == side && strings.HasPrefix(e.What, what) {
			return &e.Offset
		}
	}
	return nil
}
