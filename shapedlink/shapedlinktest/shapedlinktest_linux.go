package shapedlinktest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Main is the body of TestMain for packages whose tests build links. As
// root it runs the tests. As any other user it re-executes the test binary
// inside a user and network namespace of its own (shapedlink.Reexec) and
// exits with its status; where that is refused, it says why on stderr and
// runs the tests anyway, and New skips the ones that need a link.
func Main(m *testing.M) {
	if err := shapedlink.Reexec(); err != nil {
		fmt.Fprintf(os.Stderr, "shapedlinktest: tests that need a link will be skipped: %v\n", err)
	}
	os.Exit(m.Run())
}

// probe is built once per test binary: can this process build a link?
var probe struct {
	once sync.Once
	err  error
}

// available reports why links cannot be built here, or nil when they can.
// It builds (and closes) one lossless link the first time it is called.
func available() error {
	probe.once.Do(func() {
		p, err := shapedlink.ParseProfile("10:100")
		if err != nil {
			probe.err = err
			return
		}
		l, err := shapedlink.New(context.Background(), p, shapedlink.Options{})
		if err != nil {
			probe.err = err
			return
		}
		probe.err = l.Close()
	})
	return probe.err
}

// Need skips the test, saying why, when this machine cannot build links
// (the first call builds and closes one lossless link to find out): for
// tests that build their links some other way, such as through a program
// they run.
func Need(tb testing.TB) {
	tb.Helper()
	if err := available(); err != nil {
		tb.Skipf("this machine cannot build a shaped link (run as root, or allow unprivileged user namespaces and call shapedlinktest.Main from TestMain): %v", err)
	}
}

// RequireNoGSO fails the test, when it ends, if any UDP GSO super-packet
// left either end of link (a packet longer than one wire packet, as the
// link's egress counters see it; see shapedlink.EgressCounters). Call it
// right after New in a test that measures over the link, where a sender
// left with segmentation offload would make the measurement mean something
// else. Without it New only logs such packets when the test ends. An
// in-process link (Sim) has nothing to check: its sockets cannot do GSO.
//
// On a link that keeps the ends' offloads (shapedlink.OffloadKeep) every
// TCP segment the stack hands over is a super-packet too, so the check
// means nothing there and RequireNoGSO fails the test at once, saying so.
func RequireNoGSO(tb testing.TB, link *shapedlink.Link) {
	tb.Helper()
	if link.Backend() == shapedlink.BackendInProcess {
		return // its sockets are plain PacketConns, which cannot do GSO
	}
	if keepsOffloads(link) {
		tb.Fatalf("shapedlinktest.RequireNoGSO: this link keeps the ends' segmentation offloads (shapedlink.OffloadKeep), so super-packets are what it carries; build it with wire-sized packets (the default Offload) to check a sender for GSO")
	}
	tb.Cleanup(func() {
		report, err := superPackets(link, true)
		if err != nil {
			tb.Errorf("shapedlinktest.RequireNoGSO: reading the link's egress counters: %v", err)
		} else if report != "" {
			tb.Errorf("%s", report)
		}
	})
}

// superPackets reads both ends' egress counters and returns gsoReport's
// line for them (RequireNoGSO's when strict).
func superPackets(link *shapedlink.Link, strict bool) (string, error) {
	var ends []endCount
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		c, err := link.Instruments().EgressCounters(e)
		if err != nil {
			return "", err
		}
		ends = append(ends, endCount{end: e, oversize: c.Oversize.Packets, all: c.All.Packets})
	}
	return gsoReport(link.Backend(), ends, strict), nil
}

// New builds a link shaped to profile ("80:10:1", "20:100@50", ...) for
// the test, with opts if given (at most one). It skips the test when links
// cannot be built on this machine (see Need), and fails it when the
// profile is invalid or this link could not be built. When the test ends
// the link is closed, and the test fails if the link broke while it ran.
// If a sender used UDP GSO on the link (see RequireNoGSO), the end of the
// test also logs a line that says how many super-packets left each end and
// how to send wire-sized packets instead; it does not fail the test.
//
// The link's devices carry wire-sized packets unless opts says
// Offload: shapedlink.OffloadKeep, which a test that needs more than a few
// hundred Mbit/s wants (see shapedlink.Options.Offload); super-packets
// are then expected and not reported.
func New(tb testing.TB, profile string, opts ...shapedlink.Options) *shapedlink.Link {
	tb.Helper()
	if len(opts) > 1 {
		tb.Fatalf("shapedlinktest.New: give at most one Options, got %d", len(opts))
	}
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		tb.Fatalf("shapedlinktest.New: %v", err)
	}
	Need(tb)
	var o shapedlink.Options
	if len(opts) == 1 {
		o = opts[0]
	}
	link, err := shapedlink.New(context.Background(), p, o)
	if err != nil {
		tb.Fatalf("shapedlinktest.New(%q): %v", profile, err)
	}
	keep := keepsOffloads(link)
	tb.Cleanup(func() {
		if keep {
			// Super-packets are expected; the applied line says how the
			// backend judges them.
		} else if report, err := superPackets(link, false); err != nil {
			tb.Logf("shapedlinktest: reading the link's egress counters: %v", err)
		} else if report != "" {
			tb.Logf("%s", report)
		}
		if err := link.Err(); err != nil {
			tb.Errorf("the link broke during the test: %v", err)
		}
		if err := link.Close(); err != nil {
			tb.Errorf("closing the link: %v", err)
		}
	})
	return link
}

// keepsOffloads reports whether link was built with shapedlink.OffloadKeep.
func keepsOffloads(link *shapedlink.Link) bool {
	hs, err := link.Instruments().HostState()
	return err == nil && hs.OffloadMode == shapedlink.OffloadKeep
}
