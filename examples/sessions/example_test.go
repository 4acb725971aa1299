package main

import "fmt"

// The matrix this command runs when given no flags.
func Example() {
	fmt.Println(defaults)
	// Output:
	// profiles "80:10", losses "0 1", ccs "reno", arms "tcp quic quic-per-channel", sessions "1 2 4 8", 3 repeats of 30s (5s warm-up): 72 runs into results/sessions
}
