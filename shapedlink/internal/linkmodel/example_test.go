package linkmodel_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Driving the model with a made-up clock: a 1514-byte frame on a 10 Mbit/s
// link takes 1.2112 ms to serialise, so two back-to-back frames leave
// 40 ms + 1.2112 ms and 40 ms + 2.4224 ms after they arrive.
func ExampleModel() {
	m := linkmodel.New(linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 2}, nil)
	for i := 0; i < 3; i++ {
		due, v := m.Arrive(0, 1514)
		fmt.Println(v, time.Duration(due))
	}
	// Output:
	// accepted 41.2112ms
	// accepted 42.4224ms
	// over-limit 0s
}
