// Package bench is the run loop every example command shares, written once:
// a Matrix of profiles x loss levels x TCP congestion controls x repeats,
// each cell running every arm interleaved (tcp, quic, tcp, quic, ...), each
// run on a fresh shapedlink.Link with the server and the client re-executed
// from the same binary as separate processes inside their namespaces
// (MaybeRunRole must be the first call in main), the server's egress queue
// sampled and its egress-hook counters read while they run, and one
// run.json per run written atomically (package results).
//
// A rerun skips every run already recorded, so an interrupted matrix
// resumes; an interrupted run is not recorded and is redone; a run that
// fails for any other reason is recorded with its reason and counted as
// unmeasured by the summary. Main wraps all of it for a command: flags with
// the original Rust bench's environment variables (PROFILES, LOSSES, ...) as defaults, progress on
// stderr, and the summary (package report) on stdout at the end.
//
// Commands whose runs are not a matrix run (fallback, pathchange) share
// the same steps through their parts: RecordRun (a fresh directory, one
// run.json, interruption and failure handled as above), a Rig (the link,
// the server started and awaited, the client started, both stopped),
// RoleBases for the parts of their role specs every role has, ServeRole
// for the role processes' side, and RecordWorkload and RecordStates for
// what a spicelike workload measured.
package bench
