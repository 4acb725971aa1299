package main

import (
	"fmt"
	"io"
)

// The command line names the cells, arms and readings; the plan runs them
// interleaved, every arm and reading of a cell's repeat before the next.
func Example() {
	c, _, err := parseFlags([]string{"-profiles", "80:10", "-losses", "1", "-arms", "tcp quic", "-repeats", "2", "-duration", "30"},
		io.Discard, func(string) string { return "" })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range c.Plan()[:6] {
		fmt.Println(j.Profile, j.Arm, j.Reading, j.Repeat)
	}
	// Output:
	// 80:10:1 tcp live 1
	// 80:10:1 tcp replay 1
	// 80:10:1 tcp synthetic 1
	// 80:10:1 quic live 1
	// 80:10:1 quic replay 1
	// 80:10:1 quic synthetic 1
}
