package main

import "fmt"

// The matrix this command runs when given no flags.
func Example() {
	fmt.Println(defaults)
	// Output:
	// profiles "80:10", losses "0 1 2", ccs "reno", arms "tcp quic", caps "0 0.5 0.8", 3 repeats of 30s (5s warm-up): 54 runs into results/capped
}
