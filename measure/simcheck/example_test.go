package simcheck_test

import (
	"fmt"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure/simcheck"
)

// The agreement table for two profiles (the figures here are made up:
// Run's come from its probes), and its verdict.
func ExampleTable_Write() {
	ms := time.Millisecond
	tab := simcheck.Table{Rows: []simcheck.Row{
		{Profile: "80:10:1", Carrier: "emulator", Goodput: 2.41, Echo: simcheck.Echo{P50: 80457 * time.Microsecond, P99: 80519 * time.Microsecond, Lost: 1, Sent: 20},
			Lost: []bool{false, true, false, false}},
		{Profile: "80:10:1", Carrier: "inproc, virtual time", Goodput: 2.40, Echo: simcheck.Echo{P50: 80170 * time.Microsecond, P99: 80170 * time.Microsecond, Lost: 1, Sent: 20},
			Lost: []bool{false, true, false, false}},
		{Profile: "150:2:1", Carrier: "inproc, real time", Goodput: 1.2, Echo: simcheck.Echo{P50: 150 * ms, P99: 151 * ms, Sent: 20}, Lost: []bool{false}},
	}}
	tab.Write(os.Stdout)
	fmt.Println("verdict:", tab.Verdict())
	// Output:
	// profile  carrier               goodput Mbit/s  vs emulator  p50 RTT     vs emulator  p99 RTT     lost echoes  lost datagrams  loss pattern  targets
	// 80:10:1  emulator              2.410           -            80.457 ms   -            80.519 ms   1/20         1/4             -             -
	// 80:10:1  inproc, virtual time  2.400           -0.4%        80.170 ms   -0.287 ms    80.170 ms   1/20         1/4             identical     met (p50 not judged: no host)
	// 150:2:1  inproc, real time     1.200           -            150.000 ms  -            151.000 ms  0/20         0/1             -             -
	// targets: goodput within 3% and p50 round trip within 200µs of the emulator's (not in virtual time, where no host takes part), and the same datagrams lost
	// verdict: <nil>
}
