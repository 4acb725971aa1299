// Command pathchange moves a live session's client to a new address and
// records what each arm does about it: whether the session survives, how
// long the interactive channel stalls, what each side logged and when, and
// how TCP fails.
//
//	go run ./examples/pathchange                      # 80:10, loss 0 and 1, 5 repeats, make-first
//	go run ./examples/pathchange -order break-first
//
// The experiment is package measure/pathchange's; this command parses
// its flags and runs it. Each run builds a fresh shaped link
// (shapedlink), gives the client end a second address (AddClientAddr) and
// starts the server and client as separate processes inside their
// namespaces, with the usual five channels and the display saturating. At -change-at after the session is
// up the client changes path in one of two orders:
//
//   - make-first: the client migrates (QUIC: transport.Session.Migrate,
//     which is quic-go's AddPath, Probe and Switch on a new socket bound to
//     the new address) while the old address still works, then asks the
//     orchestrator to remove the old address (RemoveClientAddr);
//   - break-first: the old address is removed first, then the client
//     migrates. quic-go's client socket is bound to the wildcard address,
//     so its packets leave from the new address as soon as the old one is
//     gone; the server sees that as a rebinding before the explicit
//     migration arrives, and the record shows both.
//
// TCP cannot migrate (Migrate returns transport.ErrCannotMigrate, which is
// logged); its connections stay bound to the removed address.
//
// Both processes poll where their connections send and whether they have
// ended every 5 ms and log each change with a wall-clock time; the
// orchestrator logs the address removal. Each run directory under
// <workdir>/<order>/<cell>/<arm>/r<N>/ holds run.json (the usual record:
// samples, timeouts, errors, transport state), the role processes' JSON
// and logs, and pathchange.json (Record: survival, the stall, the samples
// around the change, every event in time order with its offset from the
// change). summary.md and summary.json in <workdir>/<order>/ give, per
// loss level and arm, the survival count and the median and range over
// repeats of the stall and the figures around it. Runs that have a record
// of a measurement are not repeated (use -redo); a run recorded as failed
// is measured again.
//
// The stall is the largest gap between consecutive interactive echo
// completions that ends after the change and starts within 5 s of it; if
// no echo completes after the change before the run ends, the stall is
// open and its length a lower bound. The round trip of the echo that ended
// it, the median of those sent in the 2 s after, and the largest gap in
// the 5 s before the change (the baseline an undisturbed run shows) come
// with it.
//
// It runs as root, or as any user where unprivileged user namespaces are
// allowed: it then re-executes itself in a user and network namespace of
// its own (shapedlink.Reexec). -backend picks the link's shaping (netem,
// emulator, or empty to choose). Exit status: 0 when every run was
// measured; 1 when any was not (the next invocation measures it again),
// with "N of M measurements failed" on stderr after the summary; 2 for a
// usage error; 130 when interrupted.
// -reanalyse measures nothing and exits 0 when it could recompute every
// record.
package main
