package main

import (
	"fmt"
	"io"
)

// The flags say how to shape the link and what to run on each side; what
// follows them (after an optional --) is the client command.
func Example() {
	c, err := parseFlags([]string{"-profile", "80:10:1", "-server", "iperf3 -s -1", "--", "iperf3", "-c", "198.18.0.1"}, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.run.Profile, c.run.Server, c.run.Client)
	// Output:
	// 80:10:1 iperf3 -s -1 [iperf3 -c 198.18.0.1]
}
