// Command overlink runs any program over a shaped link, the way Mahimahi's
// mm-delay and mm-link shells are used: it builds the link from a profile,
// optionally starts a server command in the link's server namespace, runs
// a command (or an interactive shell) in the client namespace, and exits
// with that command's status.
//
//	go run ./examples/overlink -profile 80:10:1 -- ping -c 10 198.18.0.1
//	go run ./examples/overlink -profile 20:100 -server "iperf3 -s -1" -- iperf3 -c 198.18.0.1 -t 10
//	go run ./examples/overlink -profile 80:10            # a shell on the client side
//
// Both commands see the link's addresses in the environment:
// QB_SERVER_ADDR (198.18.0.1), QB_CLIENT_ADDR (198.18.0.2) and QB_PROFILE,
// so a script can say "$QB_SERVER_ADDR". The client command inherits the
// terminal; SIGINT, SIGTERM and SIGHUP are passed on to it, and the server
// command is stopped (SIGTERM, then SIGKILL after -grace) once the client
// command ends. The server's output goes to stderr, prefixed. The server
// command is one command run by the shell as "sh -c 'exec COMMAND'", so
// quoting and variables work and the process is the server itself (the
// kernel kills it if overlink dies); for several commands, give it a
// script that ends by exec'ing the server.
//
// On exit it writes a JSON record (-record, "overlink.json" by default; "-"
// for none): the profile, the link as applied, the backend, the client
// command's exit status, the emulator's own counters (received, forwarded,
// drops by cause, lateness), each end's egress counters and, with -queue,
// the server end's queue samples. Killed outright, it leaves nothing
// behind: the namespaces go with its file descriptors, and both commands
// are killed by the kernel when it dies (Pdeathsig).
//
// It runs as root, or as an ordinary user where unprivileged user
// namespaces are allowed (it re-executes itself inside one; the commands
// then run as root of that namespace). Exit status: the client command's
// own (128 + the signal when a signal ended it), 2 for a usage error, 1
// when the link could not be built or the command not started.
package main
