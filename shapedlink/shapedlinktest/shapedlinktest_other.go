//go:build !linux

package shapedlinktest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Main is the body of TestMain for packages whose tests build links. Links
// need Linux: here it says so on stderr and runs the tests, and New skips
// the ones that need a link.
func Main(m *testing.M) {
	fmt.Fprintf(os.Stderr, "shapedlinktest: tests that need a link will be skipped: %v\n", available())
	os.Exit(m.Run())
}

// available reports why links cannot be built here: on this system always
// an error wrapping errors.ErrUnsupported, as shapedlink.New returns.
func available() error {
	_, err := shapedlink.New(context.Background(), shapedlink.Profile{}, shapedlink.Options{})
	return err
}

// Need skips the test, saying why: links need Linux.
func Need(tb testing.TB) {
	tb.Helper()
	tb.Skipf("this machine cannot build a shaped link: %v", available())
}

// New checks its arguments as on Linux (a bad profile, or more than one
// Options, fails the test) and then skips the test: links need Linux. It
// never returns a link.
func New(tb testing.TB, profile string, opts ...shapedlink.Options) *shapedlink.Link {
	tb.Helper()
	if len(opts) > 1 {
		tb.Fatalf("shapedlinktest.New: give at most one Options, got %d", len(opts))
	}
	if _, err := shapedlink.ParseProfile(profile); err != nil {
		tb.Fatalf("shapedlinktest.New: %v", err)
	}
	Need(tb)
	return nil
}

// RequireNoGSO does nothing here: New never returns a link on this system.
func RequireNoGSO(tb testing.TB, link *shapedlink.Link) {}
