// Command overlink runs any program over a shaped link, the way Mahimahi's
// mm-delay and mm-link shells are used: it builds the link from a profile,
// optionally starts a server command in the link's server namespace, runs
// a command (or an interactive shell) in the client namespace, and exits
// with that command's status.
//
//	go run ./examples/overlink -profile 80:10:1 -- ping -c 10 198.18.0.1
//	go run ./examples/overlink -profile 20:100 -server "iperf3 -s -1" -- iperf3 -c 198.18.0.1 -t 10
//	go run ./examples/overlink -profile 80:10            # a shell on the client side
//	go run ./examples/overlink -profile 20:50,up.rate=5 -record run.json -- ./my-test.sh
//
// -profile takes the whole grammar of package shapedlink, options
// included; -h lists them. Both commands see the link's addresses in the
// environment: QB_SERVER_ADDR (198.18.0.1), QB_CLIENT_ADDR (198.18.0.2)
// and QB_PROFILE, so a script can say "$QB_SERVER_ADDR". The server
// command is one command run by the shell as "sh -c 'exec COMMAND'", so
// quoting and variables work; its output goes to stderr, prefixed.
//
// The client command starts once the server command listens: by default
// once any TCP listener or unconnected UDP socket appears in the server
// namespace, or on the port -server-port names (tcp:5201, udp:4433,
// 5201). overlink looks every 20 ms, for at most -server-wait (10 s); a
// server command that does not listen by then, or exits first, ends the
// run with status 1 and a message saying what was waited for. For a
// server command that opens no socket, -server-port none starts the
// client after -server-wait, whatever the server does.
//
// # Processes and signals
//
// Each command runs in a PID namespace of its own under a small init
// (shapedlink's Namespace.Start): everything a command starts, a shell
// wrapper's children or a server that daemonises, ends when the command
// ends, and when overlink ends, however it ends (SIGKILL included: the
// inits die with it, and the kernel kills what was in their namespaces).
// Killed outright, overlink leaves no process and no namespace behind.
// The commands see the host's /proc (there is no mount namespace).
//
// SIGINT, SIGTERM, SIGHUP and SIGQUIT are caught from the start, and what
// they do depends on when they come:
//
//   - while the link is built, or while overlink waits for the server
//     command to listen: the run ends at once (the client command never
//     starts) and overlink exits with 128 + the signal;
//   - while the client command runs: they are passed on to it, and it
//     decides (an interactive shell ignores SIGINT and SIGTERM, as it
//     would anywhere). When overlink runs in the foreground of a terminal,
//     the client shares that terminal and overlink's process group, so
//     Ctrl-C, Ctrl-\ and a hangup reach it from the terminal itself and
//     overlink does not pass them on again; job control (Ctrl-Z, fg)
//     stops and continues the two together. Otherwise the client runs in
//     a process group of its own, and only what overlink passes on
//     reaches it;
//   - once the client has ended, the server command is stopped: SIGTERM,
//     then SIGKILL (to its init: all of it at once) after -grace, or at
//     once if a signal reaches overlink meanwhile.
//
// # The record
//
// With -record FILE it writes, on exit, a JSON record to FILE: the
// profile, the link as applied, the backend and offload mode, the client
// command's exit status, the emulator's own counters, each end's egress
// counters and, with -queue, the server end's queue samples. The
// emulator counts wire segments (a super-packet counts as each of its
// segments): per direction, what it received, forwarded and dropped by
// cause, what it still held when the counters were read (they are read
// once two readings 5 ms apart agree), and how late it wrote frames; so
// that received + duplicates = forwarded + drops + held. The egress
// counters count device writes, where a super-packet is one. Without
// -record it writes nothing (not into the current directory, which is
// the repository when run as above) and prints a short summary on stderr
// instead: how long it ran, the client's status, each direction's wire
// segments, drops by cause and lateness, and each end's device writes.
// Either way it warns on stderr when the emulator's counters say the link
// was not what the profile says: frames the host lost (socket drops, send
// errors, frames too large) or a 99th percentile lateness above 1 ms (the
// bench's threshold), with the limit drops that lateness makes more of.
// FILE is checked before anything starts: a path that cannot be written
// (a directory, below a file, in a directory this user cannot write) is
// refused with status 2. A record that still fails to be written at the
// end is reported on stderr; the exit status remains the client's.
//
// -offload keep (the default) suits programs that want a host's
// throughput. Choose -offload wire for wire-sized queue slots (netem and
// the ends' qdiscs count a super-packet as one packet), to compare with
// the bench's runs and its offload evidence, or for a link of a few
// hundred Mbit/s or less: on a small machine wire-sized ends carry about
// that much, and above it the host, not the profile, sets the rate.
//
// It runs as root, or as an ordinary user where unprivileged user
// namespaces are allowed (it re-executes itself inside one; the commands
// then run as root of that namespace). Exit status: the client command's
// own (128 + the signal when a signal ended it), 128 + the signal when a
// signal ended the run before the client command did, 2 for a usage error
// or a -record that cannot be written, 1 when the link could not be built,
// a command not started, or the server command did not listen.
package main
