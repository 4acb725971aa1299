// Package spicelive is the live SPICE rig: a real SPICE session run over
// each arm of the SPICE tunnel (package measure/spicetunnel) across a
// shaped link, its key-to-draw latency, and two other readings of the
// same cell beside it, the session's recorded shape replayed by spicelike
// and the headline's synthetic workload. It is what examples/spicelive
// runs; docs/spice-live.md has the method and the findings.
//
// # A live run
//
// Each live run is a loop.Job on a fresh link (rig.Local), which starts
// the calling binary again in both namespaces. The server role starts
// Xspice with a typing xterm and a busy one (and a display workload,
// Config.Display) and the tunnel's server end, and runs until it is
// stopped; the client role starts the tunnel's client end, Xvfb and
// spicy, and once the session is up and has settled types a key every
// Config.KeyInterval for Config.Duration. The programs are
// package xsession's; the keys are timed to their draws from the client
// end's trace by package keydraw (and, with Config.Pixel, to the pixels of
// spicy's window); with a display workload package picture measures the
// frames the client saw. A live run's LiveRecord is in LiveFile beside its
// run.json, and its samples are its run.json's round trips, so the
// statistics are the headline's.
//
// The replay reading plays a session recorded once per work directory
// over Config.Reference (or a shipped spicelike.Recording), and the
// synthetic reading is the headline's workload on the same link and arm.
// All three run interleaved, cell by cell and repeat by repeat
// (Config.Plan), the arms in a random order per repeat from a recorded
// seed (Config.Order); an arm may carry deployment settings after a plus
// sign ("tcp-bbr+defer10"). Package summary reads a work
// directory into its summary, samples and verdicts.
//
// # Use
//
// Call MaybeRunRole first thing in main (and in TestMain), then Prepare,
// then Run with a Config, then summary.Summarise:
//
//	spicelive.MaybeRunRole()
//	if err := spicelive.Prepare(); err != nil { ... }
//	err := spicelive.Run(ctx, cfg, os.Stderr, log)
//	err = summary.Summarise(os.Stdout, cfg)
//
// Run records every run under Config.Workdir and resumes it. The
// settings a work directory was made with are its SettingsFile
// (LoadConfig). xsession.MissingPrograms names the Debian packages a live
// session needs when they are absent. It runs on Linux, as root or in a
// user namespace.
package spicelive
