package main

import (
	"os"
	"time"
)

// The agreement table for one profile, as the command prints it (the
// figures here are made up: the command's come from its probes).
func Example_writeTable() {
	ms := time.Millisecond
	writeTable(os.Stdout, []row{
		{profile: "80:10:1", carrier: onEmulator, goodput: 2.41, echo: echoResult{p50: 80457 * time.Microsecond, p99: 80519 * time.Microsecond, lost: 1, sent: 20},
			lost: []bool{false, true, false, false}},
		{profile: "80:10:1", carrier: onVirtual, goodput: 2.40, echo: echoResult{p50: 80170 * time.Microsecond, p99: 80170 * time.Microsecond, lost: 1, sent: 20},
			lost: []bool{false, true, false, false}},
		{profile: "150:2:1", carrier: onRealTime, goodput: 1.2, echo: echoResult{p50: 150 * ms, p99: 151 * ms, sent: 20}, lost: []bool{false}},
	})
	// Output:
	// profile  carrier               goodput Mbit/s  vs emulator  p50 RTT     vs emulator  p99 RTT     lost echoes  lost datagrams  loss pattern  targets
	// 80:10:1  emulator              2.410           -            80.457 ms   -            80.519 ms   1/20         1/4             -             -
	// 80:10:1  inproc, virtual time  2.400           -0.4%        80.170 ms   -0.287 ms    80.170 ms   1/20         1/4             identical     met (p50 not judged: no host)
	// 150:2:1  inproc, real time     1.200           -            150.000 ms  -            151.000 ms  0/20         0/1             -             -
	// targets: goodput within 3% and p50 round trip within 200µs of the emulator's (not in virtual time, where no host takes part), and the same datagrams lost
}
