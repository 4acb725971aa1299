// Package twohost runs an experiment's runs between two hosts
// (docs/two-hosts.md): a Daemon on the server's host starts each run's
// server as one of the experiment's roles, and a Client on the other host
// is the runs' ends (a loop.Ends): it probes the path, asks the daemon for
// the server, runs the client here, and collects the server's result. No
// link is built; the path is used as found. The package knows nothing of
// the experiment: specs and results travel as JSON, and the daemon's
// DaemonConfig.Check says which specs it runs.
//
// The control protocol: one TCP connection carries a session. The daemon
// speaks first:
//
//	daemon: {"op":"hello","version":2,"nonce":DN}           (or "refused": busy)
//	driver: {"op":"auth","version":2,"nonce":CN,"proof":HMAC(secret, "client"|DN|CN)}
//	daemon: {"op":"welcome","proof":HMAC(secret, "server"|CN|DN)}   (or "refused")
//
// Each side checks the other's proof, so each shows it holds the secret
// without sending it, and a recorded exchange is no use again (both nonces
// are fresh). After that, newline-delimited JSON messages, one op each,
// every read under a deadline; per run:
//
//	driver: probe          daemon: probing {port}   (UDP echoes on that port)
//	driver: probe-done     daemon: probed {echoed}
//	driver: start {spec}   daemon: ready {addr, port, certificate} or error {why}
//	driver: finish         daemon: result {result, log, exit}
//
// and "bye" to end the session.
package twohost
