package gsocheck_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/gsocheck"
)

func Example() {
	expected := gsocheck.Expected(1400, gsocheck.VethL2) // 1442
	var samples []gsocheck.Sample
	for i := range 30 {
		// Ten full datagrams queued, and now and then a 106-byte echo.
		s := gsocheck.Sample{Packets: 10, Bytes: 10 * expected}
		if i%3 == 0 {
			s.Packets++
			s.Bytes += 106
		}
		samples = append(samples, s)
	}
	r, err := gsocheck.FromQueue(samples, expected, gsocheck.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: pooled mean %.1f, max %.0f of %d expected, %d samples\n",
		r.Verdict, r.PooledMean, r.Max, r.Expected, r.Used)
	// Output:
	// off: pooled mean 1398.9, max 1442 of 1442 expected, 30 samples
}

// The zero Options want DefaultMinSamples occupied samples before saying
// on or off, and allow DefaultTornFraction of them to read above one
// datagram per slot by less than a datagram (a torn read of the queue's
// counters); a negative TornFraction allows none.
func ExampleOptions() {
	expected := gsocheck.Expected(1400, gsocheck.VethL2)
	full := gsocheck.Sample{Packets: 4, Bytes: 4 * expected}
	torn := gsocheck.Sample{Packets: 4, Bytes: 4*expected + 700}

	few := make([]gsocheck.Sample, gsocheck.DefaultMinSamples-1)
	for i := range few {
		few[i] = full
	}
	r, _ := gsocheck.FromQueue(few, expected, gsocheck.Options{})
	fmt.Println(len(few), "samples:", r.Verdict)

	many := make([]gsocheck.Sample, 50)
	for i := range many {
		many[i] = full
	}
	many[7] = torn
	fmt.Printf("one torn in %d, %.0f allowed: ", len(many), gsocheck.DefaultTornFraction*float64(len(many)))
	r, _ = gsocheck.FromQueue(many, expected, gsocheck.Options{})
	fmt.Println(r.Verdict)
	r, _ = gsocheck.FromQueue(many, expected, gsocheck.Options{TornFraction: -1})
	fmt.Println("none allowed:", r.Verdict)
	// Output:
	// 9 samples: inconclusive
	// one torn in 50, 1 allowed: off
	// none allowed: on
}
