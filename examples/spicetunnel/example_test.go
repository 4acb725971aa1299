package main

import (
	"fmt"
	"io"
)

// The client end listens where the SPICE client connects and carries each
// of its connections to the server end.
func Example() {
	c, err := parseFlags([]string{"-end", "client", "-arm", "quic", "-listen", "127.0.0.1:5900",
		"-server", "198.18.0.1:4433", "-cert", "tunnel-cert.pem", "-secret-file", "tunnel.secret", "-trace", "client.jsonl"}, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.end, c.arm, c.listen, "->", c.server)
	// Output:
	// client quic 127.0.0.1:5900 -> 198.18.0.1:4433
}
