// Package bench runs the five-channel matrix experiment the example
// commands share: a plan.Matrix (package plan: its axes, cells, shards and
// matrix.json) run by Run. Each planned run is a RunConfig, a job on
// package loop: on a fresh shapedlink.Link (rig.Local) or between two
// hosts (package twohost, Options.Remote), with the server and the client
// re-executed from the same binary as separate processes (benchcmd.Main
// calls MaybeRunRole first; a command with a main of its own calls it
// before anything else), the server's egress queue sampled and its
// egress-hook counters read while they run over a link, and one run.json
// per run written atomically (package results).
//
// A rerun skips every run already recorded, so an interrupted matrix
// resumes; an interrupted run is not recorded and is redone; a run that
// fails for any other reason is recorded with its reason and counted as
// unmeasured by the summary. Package benchcmd is the command side: flags
// with environment variables (PROFILES, LOSSES, ...) as defaults, progress
// on stderr, and the summary (package report) on stdout at the end.
//
// The link flags (-profiles, -backend, -mode, -offload, -seed and the
// emulator's -keep-awake and -departure-window) are package linkflag's,
// registered by benchcmd.Main. Every link of a matrix is built with
// plan.Matrix.Link; the commands' -offload flag sets its Offload. The default, wire, pins every device to
// wire-sized packets, as the reference bench's links were. With keep
// (shapedlink.OffloadKeep) the ends keep TSO, GSO and checksum offload
// (GRO as the kernel sets it, off on a veth), so kernel TCP hands the link super-packets of up to 64 KiB, as
// on a host; the emulator still judges every wire segment of them on its
// own, so a 1 Gbit/s cell measures the arms rather than the ends' stacks.
// matrix.json records keep (a work directory is resumed only in its own
// mode; a record without the field is wire), and so does each run's link
// (results.Link.Offload) beside the applied lines that already say it.
// Between two hosts (-remote) no link is built, and -offload is refused as
// -backend is.
//
// What the offload evidence of a QUIC run means is the same in both
// modes: the QUIC arms send one datagram per write whatever the link
// (transport.WithoutGSO), and the check concerns only them. The server
// end's egress counters count packets before any segmentation, so a GSO
// write shows there as an oversize packet in either mode, on either
// backend. The queue samples count what the shaper holds: on the emulator
// those are wire segments in either mode (a wire-sized end segments before
// the emulator reads; with keep, the emulator cuts each super-packet into
// its segments before the model sees them), so there the counters are the
// evidence that decides; on netem a super-packet is one queue slot, so the
// queue check catches a GSO write as it always has. Kernel TCP's
// super-packets in keep mode are expected: TCP runs carry no offload
// check, and the emulator's counters (super_packets_in and _out in the
// run's link) show how many crossed. netem, though, judges a super-packet
// as one packet (one loss draw, one slot of the limit, reordered or
// duplicated whole), so with keep on netem kernel TCP is not shaped per
// segment while QUIC is: Run prints a warning and the summary repeats it;
// use -backend emulator for keep-mode comparisons.
//
// A command whose runs are not a matrix's supplies a loop.Job of its own
// and runs on the same loop (as pathchange does).
package bench
