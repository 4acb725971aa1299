package main

import (
	"os"
)

// A step schedule as the file shapedlink reads back.
func Example_schedule() {
	if err := run(os.Stdout, "", "step:10/2/5s/20s", false); err != nil {
		panic(err)
	}
	// Output:
	// {
	//   "period": "20s",
	//   "changes": [
	//     {
	//       "at": "10s",
	//       "set": "rate",
	//       "value": 2
	//     },
	//     {
	//       "at": "15s",
	//       "set": "rate",
	//       "value": 10
	//     }
	//   ]
	// }
}

// The constant trace's summary: 4 Mbit/s in every second, to the
// millisecond grid (one 1500-byte opportunity every 3 ms, 333 or 334 a
// second), and one opportunity more at the period's end.
func Example_traceSummary() {
	if err := run(os.Stdout, "const:4", "", true); err != nil {
		panic(err)
	}
	// Output:
	// const:4: 3334 opportunities, period 10s, mean 4.001 Mbit/s
	//   0 s    3.996 Mbit/s
	//   1 s    3.996 Mbit/s
	//   2 s    3.996 Mbit/s
	//   3 s    4.008 Mbit/s
	//   4 s    3.996 Mbit/s
	//   5 s    3.996 Mbit/s
	//   6 s    4.008 Mbit/s
	//   7 s    3.996 Mbit/s
	//   8 s    3.996 Mbit/s
	//   9 s    4.008 Mbit/s
}
