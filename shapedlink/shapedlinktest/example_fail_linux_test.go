package shapedlinktest_test

import (
	"fmt"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// reporter stands in for a test's *testing.T, printing what the test would
// be told.
type reporter struct{ testing.TB }

func (reporter) Helper() {}
func (reporter) Fatalf(format string, args ...any) {
	fmt.Printf("FAIL: "+format+"\n", args...)
	panic(stop{})
}
func (reporter) Skipf(format string, args ...any) {
	fmt.Printf("SKIP: "+format+"\n", args...)
	panic(stop{})
}
func (reporter) Cleanup(func()) {}

type stop struct{}

// A profile New cannot parse fails the test, with the parser's reason,
// before anything is built.
func ExampleNew() {
	defer func() { recover() }()
	shapedlinktest.New(reporter{}, "80:ten")
	// Output:
	// FAIL: shapedlinktest.New: shapedlink: profile "80:ten": rate_mbit "ten" is not a decimal number; want rtt_ms:rate_mbit[:loss_pct][@limit_pkts][,option...], e.g. 80:10 or 80:10:1
}
