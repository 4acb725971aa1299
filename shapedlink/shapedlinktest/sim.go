package shapedlinktest

import (
	"context"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Sim builds an in-process link (shapedlink.BackendInProcess) shaped to
// profile for the test, on any operating system and with no privilege:
// the emulator's model between two in-process ends whose ListenPacket
// makes net.PacketConns. Called with the *testing.T of a testing/synctest
// bubble it runs in the bubble's virtual time, so a minute of traffic
// takes as long as the endpoints' code does, and the same seeds and the
// same writes give the same packets at the same times.
//
// opts, at most one, may set Seed, Logger and PacketTrace; its Backend,
// if set, must be BackendInProcess. An invalid profile or options fail
// the test. When the test ends the link is closed (inside a bubble, its
// goroutines end with it, as the bubble requires), and the test fails if
// the link broke while it ran.
func Sim(tb testing.TB, profile string, opts ...shapedlink.Options) *shapedlink.Link {
	tb.Helper()
	if len(opts) > 1 {
		tb.Fatalf("shapedlinktest.Sim: give at most one Options, got %d", len(opts))
	}
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		tb.Fatalf("shapedlinktest.Sim: %v", err)
	}
	var o shapedlink.Options
	if len(opts) == 1 {
		o = opts[0]
	}
	if o.Backend != "" && o.Backend != shapedlink.BackendInProcess {
		tb.Fatalf("shapedlinktest.Sim builds the %q backend; for %q use shapedlinktest.New", shapedlink.BackendInProcess, o.Backend)
	}
	o.Backend = shapedlink.BackendInProcess
	link, err := shapedlink.New(context.Background(), p, o)
	if err != nil {
		tb.Fatalf("shapedlinktest.Sim(%q): %v", profile, err)
	}
	tb.Cleanup(func() {
		if err := link.Err(); err != nil {
			tb.Errorf("the link broke during the test: %v", err)
		}
		if err := link.Close(); err != nil {
			tb.Errorf("closing the link: %v", err)
		}
	})
	return link
}
