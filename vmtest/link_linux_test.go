package vmtest

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// end names one side of the link under test. A qdisc on an end shapes what
// that end sends.
type end = shapedlink.End

const (
	serverEnd = shapedlink.ServerEnd
	clientEnd = shapedlink.ClientEnd
)

// vmLink is what the tests need from a shaped link, as a thin layer over
// shapedlink.Link's public API.
type vmLink struct{ *shapedlink.Link }

// Do runs fn inside the end's namespace.
func (l vmLink) Do(e end, fn func() error) error { return l.Namespace(e).Do(fn) }

// Addr is the end's IPv4 address.
func (l vmLink) Addr(e end) netip.Addr {
	if e == clientEnd {
		return l.ClientAddr()
	}
	return l.ServerAddr()
}

// Dev is the end's veth device name (in its own namespace).
func (l vmLink) Dev(e end) string { return l.Instruments().Device(e) }

// sample runs shapedlink's queue sampler on the end until ctx is done.
func (l vmLink) sample(ctx context.Context, e end, every time.Duration) ([]shapedlink.QueueSample, error) {
	return l.Instruments().SampleQueue(ctx, e, every)
}

// newLink builds the link under test for profile with the netem backend,
// and closes it when the test ends.
func newLink(t *testing.T, profile string) vmLink {
	t.Helper()
	requireNetem(t)
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		t.Fatalf("shapedlink.ParseProfile(%q): %v", profile, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := shapedlink.New(ctx, p, shapedlink.Options{Backend: shapedlink.BackendNetem, Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, shapedlink.ErrNoNetem) && !inVM() {
		t.Skipf("shapedlink says this kernel has no sch_netem; these tests run in the VM: bash vmtest/run.sh (%v)", err)
	}
	if err != nil {
		t.Fatalf("shapedlink.New(%s, netem): %v", profile, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("closing the link: %v", err)
		}
	})
	if b := l.Backend(); b != shapedlink.BackendNetem {
		t.Fatalf("link built with backend %q, want netem", b)
	}
	for _, a := range l.Applied() {
		t.Logf("applied: %s", a)
	}
	return vmLink{l}
}
