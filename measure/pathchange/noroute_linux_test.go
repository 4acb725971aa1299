package pathchange

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// noRouteFor takes the client namespace's route to the link's /24 away
// for d: the moment in which Linux, removing the old address, has dropped
// the subnet's route and not yet added the promoted address's, widened
// from microseconds to d so that the client's sends land in it for sure.
// Removing the address then adds the route back, as it always does.
func noRouteFor(d time.Duration) func(*shapedlink.Link) error {
	return func(l *shapedlink.Link) error {
		return l.Client().Do(func() error {
			routes, err := netlink.RouteList(nil, unix.AF_INET)
			if err != nil {
				return err
			}
			removed := 0
			for _, r := range routes {
				if r.Dst != nil && r.Dst.Contains(l.ClientAddr().AsSlice()) && r.Table == unix.RT_TABLE_MAIN {
					if err := netlink.RouteDel(&r); err != nil {
						return fmt.Errorf("removing the route to %s: %w", r.Dst, err)
					}
					removed++
				}
			}
			if removed == 0 {
				return fmt.Errorf("no route to %s in the client namespace (routes %v)", l.ClientAddr(), routes)
			}
			time.Sleep(d)
			return nil
		})
	}
}

// TestBreakFirstNoRoute makes a break-first QUIC path change in which the
// client has no route at all for 300 ms before the old address goes. The
// client keeps sending (acknowledgements of the display stream, echo
// requests), those sends fail with "network is unreachable", and the
// session must survive them as loss: before transport counted them as lost
// packets, quic-go ended the connection on the first one, which is what
// TestPathChangeEndToEnd/quic-break-first hit now and then under load
// when a send fell in the kernel's own brief moment without a route.
func TestBreakFirstNoRoute(t *testing.T) {
	shapedlinktest.Need(t)
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup, w.Timeout = 4*time.Second, time.Second, time.Second
	rc := runConfig{Cell: results.Cell{Profile: "20:10", RTTms: 20, RateMbit: 10, CC: "reno"}, Profile: p,
		Arm: transport.ArmQUIC, Repeat: 1, Workload: w,
		Change:  Change{At: 2 * time.Second, Order: OrderBreakFirst, ProbeTimeout: 2 * time.Second},
		Workdir: t.TempDir(), Linger: time.Second, beforeRemove: noRouteFor(300 * time.Millisecond)}
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
	if !rec.Survived {
		t.Errorf("QUIC did not survive 300 ms without a route: %s; client errors %v, server errors %v", rec.Why, rec.ClientErrors, rec.ServerErrors)
	}
	cres, err := rig.ReadResult[roleResult](filepath.Join(rc.dir(), "client.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dropped int64
	if cres.State != nil {
		for _, q := range cres.State.QUIC {
			dropped += q.UnroutableDrops
		}
	}
	if dropped == 0 {
		t.Error("the client counted no send without a route: the window held none of its sends, so this run proves nothing")
	}
	t.Logf("the client dropped %d sends for want of a route", dropped)
}
