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
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// The runs re-execute the test binary as their server and client.
func TestMain(m *testing.M) {
	MaybeRunRole()
	os.Exit(m.Run())
}

// TestPathChangeEndToEnd moves the client across an emulated link during a
// short run: QUIC must survive in both orders, with the server following
// the client to its new address; TCP must not.
func TestPathChangeEndToEnd(t *testing.T) {
	shapedlinktest.Need(t)
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup, w.Timeout = 4*time.Second, time.Second, time.Second
	cell := results.Cell{Profile: "20:10", RTTms: 20, RateMbit: 10, CC: "reno"}
	dir := t.TempDir()
	for _, c := range []struct {
		arm   transport.Arm
		order string
	}{{transport.ArmQUIC, OrderMakeFirst}, {transport.ArmQUIC, OrderBreakFirst}, {transport.ArmTCP, OrderMakeFirst}} {
		t.Run(string(c.arm)+"-"+c.order, func(t *testing.T) {
			rc := runConfig{Cell: cell, Profile: p, Arm: c.arm, Repeat: 1, Workload: w,
				Change:  Change{At: 2 * time.Second, Order: c.order, ProbeTimeout: 2 * time.Second},
				Workdir: filepath.Join(dir, c.order), Linger: time.Second}
			rec, err := runOne(context.Background(), rc)
			if err != nil {
				t.Fatal(err)
			}
			var onDisk Record
			if err := results.ReadJSON(filepath.Join(rc.dir(), recordFile), &onDisk); err != nil {
				t.Fatalf("reading the record: %v", err)
			}
			if onDisk.Survived != rec.Survived || len(onDisk.Events) != len(rec.Events) {
				t.Error("the record on disk differs from the one returned")
			}
			if !rec.ChangeSeen || rec.Failed != "" {
				t.Fatalf("change seen %v, failed %q: the run did not measure a path change", rec.ChangeSeen, rec.Failed)
			}
			for _, e := range rec.Events {
				t.Logf("%8.3f %-6s %s", e.Offset.Seconds(), e.Side, e.What)
			}
			removed := false
			for _, e := range rec.Events {
				removed = removed || (e.Side == "link" && strings.HasPrefix(e.What, "old client address removed"))
			}
			if !removed {
				t.Error("no event says the old address was removed")
			}
			if c.arm == transport.ArmTCP {
				if rec.Survived {
					t.Errorf("TCP survived the loss of its address: %s", rec.Why)
				}
				if !rec.Stall.Open {
					t.Errorf("a TCP round trip sent after the old address went completed (stall %+v)", rec.Stall)
				}
				return
			}
			if !rec.Survived {
				t.Fatalf("QUIC did not survive: %s; client errors %v, server errors %v", rec.Why, rec.ClientErrors, rec.ServerErrors)
			}
			// Loose bounds: a 20 ms link, a shared two-core machine.
			if rec.Stall.Gap <= 0 || rec.Stall.Gap > 1500*time.Millisecond {
				t.Errorf("QUIC stall %v: want a positive gap under 1.5 s", rec.Stall.Gap)
			}
			if rec.ServerMoved == nil || rec.ServerOnPath == nil || *rec.ServerOnPath < *rec.ServerMoved {
				t.Errorf("server moved %v, on the migrated path %v: want both, in that order (peers %v)", rec.ServerMoved, rec.ServerOnPath, rec.ServerPeers)
			}
			if rec.Migration == nil || len(rec.Migration.Paths) != 1 || rec.Migration.Paths[0].Err != "" ||
				!strings.HasPrefix(rec.Migration.Paths[0].To, rec.NewAddr+":") {
				t.Errorf("migration %+v: want one path moved to %s", rec.Migration, rec.NewAddr)
			}
		})
	}
}
