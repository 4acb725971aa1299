// Package overlink runs a program of one's own over a shaped link, as
// Mahimahi's shells do: it builds the link, starts an optional server
// command in the server namespace and waits until it listens, runs a
// client command in the client namespace to its end, stops the server,
// and reads the link's counters into a Record.
//
//	p, _ := shapedlink.ParseProfile("80:10:1")
//	rec, err := overlink.Run(ctx, overlink.Config{
//		Profile: p,
//		Server:  "iperf3 -s -1",
//		Client:  []string{"iperf3", "-c", "198.18.0.1"},
//		Stdout:  os.Stdout, Stderr: os.Stderr,
//	})
//	for _, line := range rec.Summary() {
//		fmt.Println(line)
//	}
//
// Running and rendering are apart: Run returns the Record (it marshals to
// the JSON that examples/overlink writes with -record), and Summary and
// Warnings turn it into lines. The command examples/overlink is Run behind
// flags; its doc says what a user sees.
//
// # Processes and signals
//
// Each command runs in a PID namespace of its own under a small init
// (shapedlink's Namespace.Start): everything a command starts, a shell
// wrapper's children or a server that daemonises, ends when the command
// ends, and when this process ends, however it ends (SIGKILL included:
// the inits die with it, and the kernel kills what was in their
// namespaces). The commands see the host's /proc (there is no mount
// namespace), and the link's addresses in the environment as
// QB_SERVER_ADDR, QB_CLIENT_ADDR and QB_PROFILE.
//
// Signals the caller catches (signal.Notify for Signals, from before Run)
// reach Run through Config.Signals, and what they do depends on when they
// come:
//
//   - while the link is built, or while Run waits for the server command
//     to listen: the run ends at once (the client command never starts)
//     with Interrupted;
//   - while the client command runs: they are passed on to it, and it
//     decides. When Config.Stdin is the caller's controlling terminal,
//     the client shares that terminal and the caller's process group, so
//     the terminal's keys (Ctrl-C, Ctrl-\, a hangup) reach it from the
//     terminal itself and Run does not pass them on again; job control
//     stops and continues the two together. Otherwise the client runs in
//     a process group of its own, and only what Run passes on reaches it;
//   - once the client has ended, the server command is stopped: SIGTERM,
//     then SIGKILL (to its init: all of it at once) after Config.Grace,
//     or at once if a signal comes meanwhile.
//
// Cancelling ctx does what a signal does before the client starts, kills
// the client command (its whole PID namespace) while it runs, and cuts
// the server's grace short.
//
// # The record
//
// The emulator counts wire segments (a super-packet counts as each of its
// segments): per direction, what it received, forwarded and dropped by
// cause, what it still held when the counters were read (they are read
// once two readings 5 ms apart agree), and how late it wrote frames; so
// that received + duplicates = forwarded + drops + held
// (DirectionRecord.Imbalance is zero). The egress counters count device
// writes, where a super-packet is one. Warnings flags frames the host
// lost (socket drops, send errors, frames too large), super-packets
// judged whole, and a 99th percentile lateness above LateLimit, with the
// limit drops that lateness makes more of.
//
// Config.Link.Offload decides what the ends carry. shapedlink.OffloadKeep
// suits programs that want a host's throughput: the ends keep the kernel's
// segmentation offloads and the emulator still judges every wire segment.
// shapedlink.OffloadWire (the zero value) gives wire-sized queue slots
// (netem and the ends' qdiscs count a super-packet as one packet), to
// compare with the bench's runs and its offload evidence, or for a link of
// a few hundred Mbit/s or less: on a small machine wire-sized ends carry
// about that much, and above it the host, not the profile, sets the rate.
//
// The package knows links and processes only: no transport, workload or
// statistics. It needs Linux; elsewhere Run returns an error wrapping
// errors.ErrUnsupported.
package overlink
