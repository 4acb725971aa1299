// Command overlink runs any program over a shaped link, the way Mahimahi's
// mm-delay and mm-link shells are used: it builds the link from a profile,
// optionally starts a server command in the link's server namespace, runs
// a command (or an interactive shell) in the client namespace, and exits
// with that command's status. It is package shapedlink/overlink behind
// flags; that package's doc says more on each point below.
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
// Each command runs in a PID namespace of its own: all it starts ends with
// it, and with overlink, however overlink ends (SIGKILL included, leaving
// no process or namespace). SIGINT, SIGTERM, SIGHUP and SIGQUIT are
// caught from the start:
//
//   - while the link is built, or while the server command is awaited:
//     the run ends at once and overlink exits with 128 + the signal;
//   - while the client command runs: they are passed on to it, and it
//     decides. In the foreground of a terminal the client shares the
//     terminal and overlink's process group, so the terminal's keys reach
//     it directly and job control stops and continues the two together;
//   - once the client has ended, the server command gets SIGTERM, then
//     SIGKILL after -grace, or at once if a signal comes meanwhile.
//
// # The record
//
// With -record FILE it writes, on exit, a JSON record to FILE (package
// shapedlink/overlink's Record): the link as applied, the client's exit
// status and the link's counters; without it, nothing, and a short
// summary on stderr. Either way it warns on stderr when the counters say
// the link was not the profile's. FILE is checked before anything starts
// (status 2 when it cannot be written); a record that fails to be
// written at the end is reported on stderr, and the exit status remains
// the client's.
//
// -offload keep (the default) suits programs that want a host's
// throughput; -offload wire gives wire-sized queue slots, as the bench's
// (netem and the ends' queues count a super-packet as one packet). On a
// small machine wire-sized ends carry a few hundred Mbit/s: above that the
// host, not the profile, sets the rate, and the summary warns when the
// emulator runs late.
//
// The emulator runs with a 200 us departure window (-departure-window 0
// turns it off) and keep-awake decided by probing how late the host wakes
// an idle CPU (-keep-awake on or off fixes it; on costs every CPU at 100%
// in the idle class while the link is up; docs/calibration.md). The
// summary and the record say which were on.
//
// It runs as root, or as an ordinary user where unprivileged user
// namespaces are allowed (it re-executes itself inside one; the commands
// then run as root of that namespace). Exit status: the client command's
// own (128 + the signal when a signal ended it), 128 + the signal when a
// signal ended the run before the client command did, 2 for a usage error
// or a -record that cannot be written, 1 when the link could not be built,
// a command not started, or the server command did not listen.
package main
