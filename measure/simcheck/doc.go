// Package simcheck checks the in-process link (shapedlink's
// BackendInProcess) against the emulator it shares its model with, and
// runs the headline's QUIC arms in virtual time.
//
// The agreement (Run) takes each profile over three carriers, each probe
// over a fresh link with the same seed: the emulator in real time, the
// in-process link in real time, and the in-process link in virtual time
// (a testing/synctest bubble). The probes are a quic-go bulk transfer's
// goodput after a warm-up, an idle UDP echo's round trips, and which
// datagrams of a sparse numbered stream were lost. The Table reads each
// in-process row against the emulator's: goodput within 3%,
// p50 round trip within 200µs (not in virtual time, where no host
// takes part) and the very same datagrams lost.
//
//	func TestAgreement(t *testing.T) {
//		c := simcheck.Config{Profiles: []string{"80:10:1"}, Seed: 1, Probes: simcheck.DefaultProbes(), Emulator: true}
//		tab, err := simcheck.Run(t.Context(), t, c)
//		if err != nil {
//			t.Fatal(err)
//		}
//		tab.Write(os.Stdout)
//		if err := tab.Verdict(); err != nil {
//			t.Error(err)
//		}
//	}
//
// The headline (RunHeadline) runs the QUIC arms over one profile,
// interleaved, every repeat over a fresh in-process link in one synctest
// bubble, through package measure, and returns each arm's cell, the
// verdict of stats.Compare and the wall and virtual time taken.
//
// Both need a *testing.T, for synctest's bubbles: call them from a test,
// or run them as the one test of testing.Main, as examples/simcheck does.
// Running is apart from rendering: Run and RunHeadline return values that
// Write prints and Verdict judges. QUIC runs use Probes.PacketSize and
// HeadlineConfig.PacketSize, 1280 by default: quic-go v0.65 cannot run
// larger packets in virtual time (see transport.Options.PacketSize).
package simcheck
