// Command spicelive runs a real SPICE session over each arm of the SPICE
// tunnel across a shaped link, measures key-to-draw latency, and reads it
// beside two other readings of the same cell: spicelike replaying the
// session's recorded shape, and the headline's synthetic workload.
//
//	go run ./examples/spicelive                  # 80:10 and 150:2 at 0% and 1% loss, every arm, 5 x 45 s
//	go run ./examples/spicelive -control         # the control: tcp at 10:100 and 110:100, no loss
//	go run ./examples/spicelive -profiles 80:10 -losses 1 -repeats 1 -duration 10 -warmup 2
//	go run ./examples/spicelive -summary -workdir results/spicelive
//
// # A live run
//
// Each live run builds a fresh link and starts this binary again in both
// namespaces. In the server namespace: Xspice (Xorg with the spiceqxl
// driver, a 1024x768 screen, listening for SPICE on the namespace's
// address, port 5900, plain TCP, a fixed ticket), an xterm running cat at
// +0+0 that is typed into, an xterm below it printing a line every
// -busy-interval (the busy area), and the tunnel's server end. In the
// client namespace: the tunnel's client end on 127.0.0.1:5900, Xvfb, and
// spicy under it connected to the tunnel. Once the session is up (the
// inputs channel linked and a draw seen) and has settled, xdotool presses
// a key in spicy's window every -key-interval for -duration: the letters
// in turn, Return after every 40th. A screenshot of spicy's window ends
// the run. Every program is stopped by its process group, and is killed
// by the kernel if its role dies.
//
// The tunnel carries spicy's connections over the run's arm (tcp: a TCP
// connection per SPICE channel; quic: one QUIC connection, a stream per
// channel; quic-per-channel: a QUIC connection per channel), the tcp arm
// pinned to -cc (reno, to match quic-go's NewReno as the headline does),
// and both ends write a trace of every message (client-trace.jsonl,
// server-trace.jsonl in the run's directory).
//
// # The latency figure
//
// Key-to-draw is read from the client end's trace: from each key press on
// the inputs channel to the first display message after it that draws on
// the screen (the primary surface) inside the typed-into xterm's area (its
// geometry read back from Xspice), both timed when their last byte passed
// the client end of the tunnel. Draws elsewhere, the busy area's included,
// are not counted. A key with no such draw before the next key is counted
// as unanswered (the figure's timeouts), and the key after it is not timed
// (its first draw may be the late answer); a key typed that never reached
// the tunnel is unanswered too. Should a program of the session (Xspice's
// X server, an xterm, Xvfb, spicy) or an end of the tunnel stop before the
// run ends, the run fails, saying which, and is redone by a rerun. A run's samples are its
// run.json's round trips, so the statistics are the headline's: a cell's
// p50, p95 and p99 are medians over repeats of each repeat's own, the
// spread is the range of repeat p95s, and an arm is read against tcp by
// stats.Compare (a difference within the wider spread is unresolved).
//
// # Replay and synthetic
//
// The replay reading plays a session recorded once per work directory
// over the -reference link (tcp arm): the live run's two traces, with the
// measured keys and their draws tagged, become a spicelike.Replay
// (reference/replay.json), and every replay run plays it over the cell's
// link and arm with the bench's precision: key-to-echo is that reading's
// round trip. The synthetic reading is the headline's workload (a
// saturating display, a 64-byte echo) on the same link and arm. All three
// are run interleaved, cell by cell and repeat by repeat.
//
// # The control
//
// -control runs live sessions on the tcp arm over lossless links that
// differ only in their round trip (10:100 and 110:100 unless -profiles
// says otherwise) and checks three things a wrong instrument would fail:
// the median key-to-draw moves by the change of the round trip (within a
// quarter of it, or 10 ms); no key is answered faster than the round trip;
// and counting every draw would have given intervals shorter than the
// round trip, so the busy area's draws were there and were kept out. It
// exits 1 when a check fails.
//
// # Results and exit codes
//
// Runs are recorded as the other commands' are, one results tree per
// reading: WORKDIR/live, WORKDIR/replay and WORKDIR/synthetic (the
// control's in WORKDIR/control), each WORKDIR/<reading>/<cell>/<arm>/r<N>
// with run.json, both roles' specs, logs and results, and for a live run
// live.json (the analysis), the traces, the X servers' logs and the
// screenshot. A rerun resumes: measured runs are skipped, failed ones set
// aside and redone, and a work directory made with other settings is
// refused. It exits 0 when every run was measured, 1 when some failed (or
// the control did), 2 when the command line or the work directory was
// refused or the programs a live session needs are missing, 130 when
// interrupted.
//
// It needs Debian's xserver-xspice, spice-client-gtk, xvfb, xdotool and
// xterm (and imagemagick for the screenshots), and root: like the other
// commands it re-executes itself in a user namespace when started
// unprivileged, but whether Xorg starts there has not been tried.
package main
