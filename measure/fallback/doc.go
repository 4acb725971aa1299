// Package fallback measures what it costs a client to try QUIC first and
// fall back to per-channel TCP when UDP is blocked: how long until the
// session is usable, against dialling TCP directly and against QUIC with
// UDP open. It is what examples/fallback runs; docs/fallback.md has the
// method and the findings.
//
// For each profile and arm Run makes one run of the run loop (loop.One on
// rig.Local): a fresh link, a server that listens for both arms on one
// port number (transport.ListenFallback) and a client that makes Config.Connects connects one after another, each
// timed from just before the dial until the session is usable and then
// closed. The arms: armTCP dials TCP directly (transport.Dial);
// armFallbackOpen and armFallbackBlocked dial with transport.DialFallback,
// the second while shapedlink's BlockUDP drops every UDP packet leaving
// the client namespace, so the dialer waits out Config.GiveUp and dials
// TCP. One Record per profile and arm goes to the work directory (the
// loop's run.json goes beside the roles' files); Summarise renders
// them as markdown.
//
// # Use
//
// Call MaybeRunRole first thing in main (and in TestMain), then Prepare,
// then Run; Load reads back every record of a work directory:
//
//	fallback.MaybeRunRole()
//	if err := fallback.Prepare(); err != nil { ... }
//	if _, err := fallback.Run(ctx, cfg); err != nil { ... }
//	recs, err := fallback.Load(cfg.Workdir)
//	err = fallback.Summarise(os.Stdout, recs)
//	if line := fallback.Failures(recs); line != "" { ... }
//
// Run resumes: a profile and arm already recorded is skipped, one
// recorded as failed is measured again. It runs on Linux, as root or in a
// user namespace (nftables blocks UDP there too).
package fallback
