package main

import (
	"fmt"
	"io"
)

// The command line becomes the library's Config: the link, the loss
// levels and arms to run, and the change to make.
func Example() {
	c, err := parseFlags([]string{"-profile", "80:10", "-losses", "0 1", "-arms", "tcp quic", "-repeats", "3",
		"-order", "break-first", "-change-at", "8s", "-duration", "16s"}, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Profile, c.Losses, c.Arms, c.Repeats)
	fmt.Println(c.Change.Order, c.Change.At, c.Workload.Duration, c.Workdir)
	// Output:
	// 80:10 [0 1] [tcp quic] 3
	// break-first 8s 16s results/pathchange
}
