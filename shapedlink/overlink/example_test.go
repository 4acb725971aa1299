package overlink_test

import (
	"context"
	"fmt"
	"os"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/overlink"
)

// Ping the server end across 80 ms and 10 Mbit/s with 1% loss, then print
// the run's summary and any warnings. It needs Linux and root (or
// unprivileged user namespaces, after shapedlink.Reexec).
func ExampleRun() {
	p, err := shapedlink.ParseProfile("80:10:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, err := overlink.Run(context.Background(), overlink.Config{
		Profile: p,
		Link:    shapedlink.Options{Backend: shapedlink.BackendEmulator},
		Client:  []string{"ping", "-c", "5", "198.18.0.1"},
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ping exited", rec.ExitCode)
	for _, line := range append(rec.Summary(), rec.Warnings()...) {
		fmt.Println(line)
	}
}

// A command line's -server-port, read into a Config's ServerPort.
func ExampleParseServerPort() {
	for _, s := range []string{"tcp:5201", "4433", "any", "none", "sctp:80"} {
		w, err := overlink.ParseServerPort(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(w)
	}
	// Output:
	// tcp port 5201
	// port 4433 (tcp or udp)
	// any port (a TCP listener or an unconnected UDP socket)
	// nothing (-server-port none)
	// "sctp:80": want tcp:PORT, udp:PORT or PORT (1-65535), any, or none
}
