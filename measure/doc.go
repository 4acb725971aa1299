// Package measure runs arms of the spicelike workload across a path, a
// shaped link or loopback, in a few lines, with both ends in this process:
//
//	link := shapedlinktest.New(t, "80:10:1")
//	r, err := measure.Run(ctx, measure.OverLink(link), measure.QUIC, spicelike.Defaults())
//	if err != nil {
//		t.Fatal(err)
//	}
//	s, err := stats.SummariseRepeat(r.Repeat, spicelike.Defaults().Warmup)
//
// It is the composition the bench makes, for importers: an arm's sessions
// carry the workload's channels, the link's namespaces hold the sockets,
// and the result is what the stats package takes. Package bench runs the
// same two ends (Serve and Client) in processes of their own, over a
// matrix of links and arms; packages results and report record and
// summarise what it ran.
//
// # Arms
//
// An Arm is a way of carrying N channels, by the name flags, matrices and
// records give it. The built-in arms wrap package transport's (TCP, QUIC,
// QUICPerChannel, QUICPriority, and TCPMux, every channel over one TCP
// connection with a framing of its own); "tcp-" and a congestion
// control's name (tcp-reno, tcp-quicreno) is kernel TCP pinned to that
// controller. Quinn and QuinnPriority carry the channels over quinn (Rust)
// through transport/quinncarrier's program, run in each end's namespace
// (docs/quinn.md). Lookup checks a name, and nothing else: it registers
// nothing. An arm's QUIC says whether it carries QUIC, and its Listen and
// Dial give an ArmListener and an ArmSession whose Channels carry the
// workload.
//
// An importer's own arm, a proxy under test for example, is a Transport
// (a name, QUIC, Listen and Dial) registered once with Register, from an
// init function; it is then an arm like the others, and the matrix's
// server and client processes (this program, re-executed) have it too. A
// Transport that needs per-run options on each end (a certificate both
// ends share) implements Preparer.
//
// # Carriers
//
// A tunnel in front of a real application (measure/spicetunnel) opens
// channels one at a time, as the application's connections arrive, rather
// than N at once: a carrier. DialCarrier and ListenCarrier make one for
// any of the arms with carriers: transport's tcp, quic, quic-per-channel and
// tcp-mux (transport.DialMuxCarrier, ListenMuxCarrier).
//
// The transports themselves, whose Session, Listener, Carrier and
// CarrierListener are structs, are package transport's; the matrix,
// records and summaries are measure's subpackages.
//
// # What Run does
//
// The server listens (Path.ServerAddr, its sockets made by Path.Server)
// and accepts one session; the client dials it (its sockets made by
// Path.Client) and both run the workload, spicelike.RunServer on one end
// and RunClient on the other. Then the ends close in the order the
// workload needs: the client closes its session once RunClient has read
// everything, and the server closes its own only when it has seen the
// client's close (or after the workload's Timeout). A QUIC close is
// immediate, so a server that closed first would throw away what was
// still in flight, such as the echo of the client's end marker. Last,
// Path.Check (for OverLink, the link's Err) says whether the path held.
//
// The run fails when the client could not dial or run the workload, or a
// channel failed, or the check failed. The error names the end and the
// step; Result.Repeat.Failed carries the same text, so a cell of failed
// repeats given to stats.SummariseCell says why in its error too. A
// server's own error is kept in Result.ServerError and added to a failed
// run's error, but does not fail a run whose client measured in full.
//
// # Repeats and cells
//
// A cell is several runs of the same arm, each over a fresh link, read by
// stats:
//
//	var repeats []stats.Repeat
//	for range 5 {
//		link := shapedlinktest.New(t, "80:10:1")
//		r, _ := measure.Run(ctx, measure.OverLink(link), measure.TCP, cfg, transport.Options{CongestionControl: "reno"})
//		repeats = append(repeats, r.Repeat) // a failed run counts as failed
//	}
//	cell, err := stats.SummariseCell(repeats, cfg.Warmup)
//
// (shapedlinktest closes each link when the test ends; outside a test,
// close each link once its run is done.)
//
// # One process, not two
//
// Both ends run as goroutines of the calling process, unlike the bench's
// commands (examples/headline and the others), which run the server and
// the client as separate processes, one in each namespace. In one process
// the two ends share a heap and a garbage collector, so the server's bulk
// writing and its half of a user-space QUIC stack can lengthen the
// client's round trips by a collection's pauses and by taking its CPU (see
// spicelike's package doc). That is fine for checking behaviour and for
// differences of milliseconds; for sub-millisecond comparisons between
// arms, run the bench.
//
// # In virtual time
//
// Over an in-process link (shapedlinktest.Sim, or shapedlink.New with
// BackendInProcess) inside a testing/synctest bubble, a run takes the
// link's virtual time, not the clock's: a 45 s repeat of the QUIC arms
// finishes in well under a second of wall time, and every figure is the
// link's and the arms' alone, with no host scheduling in it. The tcp arm
// cannot run there (the in-process link carries datagrams only), and the
// QUIC arms need transport.Options.PacketSize 1280 (see there why; a
// larger size, the default included, is refused there):
//
//	synctest.Test(t, func(t *testing.T) {
//		link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 1})
//		r, err := measure.Run(t.Context(), measure.OverLink(link), measure.QUIC, cfg, transport.Options{PacketSize: 1280})
//		...
//	})
//
// # What it is not
//
// measure builds no link (OverLink takes one; OverLink's link is still
// the caller's to close), writes no records and computes no statistics
// beyond filling a stats.Repeat. Like transport, it runs on Linux; elsewhere
// only the QUIC arms over an in-process link may work (untried), and the
// rest fails with transport's error.
package measure
