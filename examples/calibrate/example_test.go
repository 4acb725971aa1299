package main

import "fmt"

// The rates -sweep and -iperf3 take, and one they refuse.
func Example_parseRates() {
	fmt.Println(parseRates("-sweep", "200 500 1e3"))
	_, err := parseRates("-iperf3", "10 fast")
	fmt.Println(err)
	// Output:
	// [200 500 1000] <nil>
	// -iperf3: "fast" is not a rate in Mbit/s between 0 and 100000
}
