package overlink_test

import (
	"context"
	"encoding/json"
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

// Read a record that examples/overlink saved with -record: each
// direction's drops, and whether the emulator's counters account for
// every wire segment it received. Here the link still carried traffic
// while they were read (Unsettled), so one direction is off by a frame.
func ExampleDirectionRecord() {
	saved := `{"profile": "80:10:1", "backend": "emulator", "exit_code": 0,
	  "shaper": {"priority": "SCHED_FIFO 1", "unsettled": true, "directions": [
	    {"direction": "server->client", "received": 9000, "forwarded": 8890, "loss_drops": 91, "limit_drops": 12, "held": 7},
	    {"direction": "client->server", "received": 4000, "forwarded": 3957, "loss_drops": 40, "held": 2}]}}`
	var rec overlink.Record
	if err := json.Unmarshal([]byte(saved), &rec); err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range rec.Shaper.Directions {
		fmt.Printf("%s: %d of %d dropped, %d held, off by %d\n", d.Direction, d.Dropped(), d.Received, d.Held, d.Imbalance())
	}
	fmt.Println("unsettled:", rec.Shaper.Unsettled)
	// Output:
	// server->client: 103 of 9000 dropped, 7 held, off by 0
	// client->server: 40 of 4000 dropped, 2 held, off by 1
	// unsettled: true
}
