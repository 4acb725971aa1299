package linkmodeltest_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel/linkmodeltest"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// A 40 ms, 10 Mbit/s direction with 1% loss and a 100-packet limit: the
// floods fill the limit, and about 1% of the rest is lost.
func ExampleFingerprint() {
	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, LossPct: 1, Limit: 100, Seed: 7}
	fmt.Println(linkmodeltest.Fingerprint(d))
	// Output:
	// e2781866d91b0494 accepted 4946 lost 66 over-limit 988 blackout 0 dup 0 reordered 0 marked 0 queue-dropped 0
}
