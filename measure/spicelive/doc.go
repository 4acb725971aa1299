// Package spicelive is the live SPICE rig: a real SPICE session run over
// each arm of the SPICE tunnel (package measure/spicetunnel) across a
// shaped link, its key-to-draw latency, and two other readings of the
// same cell beside it, the session's recorded shape replayed by spicelike
// and the headline's synthetic workload. It is what examples/spicelive
// runs; docs/spice-live.md has the method and the findings.
//
// # A live run
//
// Each live run builds a fresh link (rig.NewRig) and starts the calling
// binary again in both namespaces. In the server namespace: Xspice (Xorg
// with the spiceqxl driver, a 1024x768 screen, listening for SPICE on the
// namespace's address at SpicePort, plain TCP, a fixed ticket), an xterm
// running cat at +0+0 that is typed into, an xterm below it printing a
// line every Config.BusyInterval (the busy area), and the tunnel's server
// end. In the client namespace: the tunnel's client end on ClientListen,
// Xvfb, and spicy under it connected to the tunnel. Once the session is
// up (the inputs channel linked and a draw seen) and has settled, xdotool
// presses a key in spicy's window every Config.KeyInterval for
// Config.Duration: the letters in turn, Return after every 40th. A
// screenshot of spicy's window ends the run. Every program is stopped by
// its process group, and is killed by the kernel if its role dies; should
// one stop before the run ends, the run fails, saying which.
//
// With Config.Pixel the client role also times each key to the first
// change of the typing xterm's pixels in spicy's window (DAMAGE on its
// Xvfb, each damaged rectangle over the xterm read back), typing the keys
// itself through XTEST so that each key's time is known; AttributePixels
// pairs them (with a display workload AnalysePixelGlyphs, by glyph, from
// the rectangles each change covered), and LiveRecord.Pixel holds the
// figure beside key-to-draw.
//
// The key-to-draw figure is read from the client end's trace (Analyse);
// a run's samples are its run.json's round trips, so the statistics are
// the headline's. The replay reading plays a session recorded once per
// work directory over Config.Reference (tcp arm), with the measured keys
// and their draws tagged, as a spicelike.Replay; key-to-echo is its round
// trip; with Config.Recording it plays that shipped recording
// (spicelike.Recording) instead, and Record makes such a recording. The
// synthetic reading is the headline's workload on the same link
// and arm. All three run interleaved, cell by cell and repeat by repeat
// (Config.Plan), the arms in a random order per repeat from a recorded
// seed (Config.Order, OrderSeed); an arm may carry deployment settings
// after a plus sign (SplitArm, "tcp-bbr+defer10"). Each live run records
// its place in that order and the host's CPU (LiveRecord.Position,
// HostCPU), and the summary flags runs on a late emulator or a saturated
// host. Summarise gives each unresolved verdict, and every verdict
// of a lossy cell, the repeats per arm its spread would need
// (stats.EstimateRepeats).
//
// # Display workloads
//
// With Config.Display (DisplayVideo or DisplayImages) the server role
// also starts gst-launch-1.0 drawing a window right of the xterms: a
// moving zone plate at Config.FrameRate, which spice-server streams as
// video, or a fresh colour-noise image every Config.ImageInterval, which
// it sends as lossless images; Config.DisplayWidth and DisplayHeight size
// it (SetDisplay sets the defaults). The typing xterm then hides its
// cursor and keys are read by AnalyseGlyphs, each timed to the draw of its
// own glyph within Config.KeyTimeout, so keys may overlap. After the
// typing the client waits for the last keys' answers, up to KeyTimeout
// after the last key, so every key typed is timed; one never answered
// counts in the run's samples at the timeout (Analysis.Censored). The run's
// LiveRecord.Display says what the display channel carried in the
// measured part; a run below SaturatedShare of the link's rate did not
// saturate, and the summary says so beside the verdict and puts it down to
// the transport or the workload by the synthetic reading's bulk rate in the
// same arm and cell (LimitedByTransport). DisplayMissing names the
// packages the workloads need.
//
// Beside the keys, LiveRecord.Picture is the picture the run got: the
// workload's distinct frames in spicy's window (DAMAGE on the client's
// Xvfb, the workload's region read back and hashed) against the drawings
// over it on Xspice's screen (DAMAGE alone: reading Xspice's screen back
// stalls its X server), per second of the measured part;
// the share of the display's bytes sent as a video stream and as images;
// and its bytes per delivered frame. A good picture is one where the
// client sees at least GoodPictureShare of the frames a second the
// workload offers (GoodPicture). runs.csv and the
// summary carry them; ReadRuns reads runs.csv with or without them.
//
// # The control
//
// With Config.Control, live sessions on the tcp arm run over lossless
// links that differ only in their round trip, and Summarise checks three
// things a wrong instrument would fail: the median key-to-draw moves by
// the change of the round trip (within a quarter of it, or 10 ms); no key
// is answered faster than the round trip; and counting every draw would
// have given intervals shorter than the round trip on at least one link,
// so the busy area's draws were there and were kept out.
//
// KeyPaths splits each key-to-draw into the parts the two tunnel ends'
// traces tell apart (up, inside spice-server, down), and WriteSamples
// exports a work directory's keys and runs as CSV for docs/results.
// Config.ServerOptions, NotSentLowat and SpiceRcvBuf are the settings a
// deployment could choose: spice-server's, and the tunnel's buffers.
//
// # Use
//
// Call MaybeRunRole first thing in main (and in TestMain), then Prepare,
// then Run with a Config, then Summarise:
//
//	spicelive.MaybeRunRole()
//	if err := spicelive.Prepare(); err != nil { ... }
//	err := spicelive.Run(ctx, cfg, os.Stderr, log)
//	err = spicelive.Summarise(os.Stdout, cfg)
//
// Run records every run under Config.Workdir and resumes it; a live
// run's LiveRecord is in LiveFile beside its run.json. MissingPrograms
// names the Debian packages a live session needs (xserver-xspice,
// spice-client-gtk, xvfb, xdotool, xterm; imagemagick for screenshots)
// when they are absent. It runs on Linux, as root or in a user namespace.
package spicelive
