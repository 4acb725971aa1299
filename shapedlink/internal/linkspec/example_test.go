package linkspec_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// The 80:10:1 profile's direction: 40 ms each way, 10 Mbit/s, 110 packets,
// 1% loss, in the emulator's words.
func ExampleDirection_Describe() {
	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110, LossPct: 1, Seed: 7}
	fmt.Println(d.Describe())
	d.LossPct = 0
	fmt.Println(d.Describe())
	// Output:
	// delay 40ms rate 10Mbit limit 110 loss 1% seed 7
	// delay 40ms rate 10Mbit limit 110 seed 7
}

// options are set one key at a time, as a profile's options are, and
// applied to a direction in their own order.
func ExampleDirOptions() {
	var o linkspec.DirOptions
	for _, kv := range [][2]string{{"loss", "1%/25"}, {"jitter", "5ms/normal"}, {"qdisc", "fifo"}} {
		if err := o.Set(kv[0], kv[1]); err != nil {
			fmt.Println(err)
		}
	}
	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110}
	o.Apply(&d)
	fmt.Println(o.Value("loss"))
	fmt.Println(o.Value("jitter"))
	fmt.Println(o.Has("qdisc"))
	fmt.Println(d.Describe())
	// Output:
	// 1/25 true
	// 5/normal true
	// false
	// delay 40ms jitter 5ms distribution normal rate 10Mbit limit 110 loss 1% 25% seed 0
}
