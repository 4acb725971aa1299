// Command simcheck checks the in-process link (shapedlink's
// BackendInProcess) against the emulator it shares its model with, and
// runs the headline's QUIC arms in virtual time.
//
// The agreement, the default:
//
//	go run ./examples/simcheck
//
// For each -profile (by default 80:10, 80:10:1, 150:2:1, 1% loss in bursts
// of 3 as 80:10,loss=ge:0.3367/33.33, and 80:10,jitter=5/normal) it runs
// three probes on three carriers, each probe over a fresh link seeded with
// -seed: the emulator (real time, as root or in an unprivileged user
// namespace, which it enters itself), the in-process link in real time,
// and the in-process link in virtual time (a testing/synctest bubble). The
// probes are a quic-go bulk transfer through transport's quic arm (its
// goodput after a warm-up), an idle UDP echo of 64 bytes every 20 ms (its
// round trips' p50 and p99), and a stream of numbered 100-byte datagrams
// sparse enough that the limit never binds (which of them were lost). The
// table gives each in-process row's difference from the emulator's and
// says whether it meets the targets: goodput within 3%, p50 round trip
// within 0.2 ms, and the very same datagrams lost, which the shared model
// promises (its loss draws depend only on the datagrams' order, and
// nothing else crosses the emulator's link).
//
// In virtual time no host takes part, so its round trips are the model's
// own; the emulator's include the host's wake-ups and the kernel's path,
// which is what its difference from the virtual row measures.
//
// The headline:
//
//	go run ./examples/simcheck -headline
//
// runs the arms quic and quic-per-channel (spicelike's five channels, its
// defaults: 45 s runs of which 5 s warm-up) over 80:10:1, interleaved, 5
// repeats each, every repeat over a fresh in-process link in virtual time,
// through package measure; and prints each arm's cell (p50, p95 and the
// repeats' spread), the verdict of stats.Compare and the wall time taken.
//
// Both run QUIC with 1280-byte packets (-packet) where the bench's arms
// use 1400: quic-go v0.65's pacer keeps 1280 as its datagram size whatever
// the configured one, and with a larger one its send loop spins without
// waiting while the pacing budget lies between the two, which in virtual
// time, where time stands still while a goroutine runs, never ends (see
// transport.Options.PacketSize). The agreement's carriers all use the
// same size, so they compare like with like; the headline in virtual time
// is not the real-time bench's cell packet for packet.
//
// A command gets the *testing.T that synctest's bubbles need by running
// its virtual part as the one test of testing.Main; the output therefore
// ends with the testing package's "PASS", or "FAIL" when something was
// not measured.
//
// Each mode's flags are refused in the other, and every flag is checked
// (durations and counts within bounds) whatever the mode. It exits 0 when
// every row ran and every row read against the emulator met the targets
// (with -headline: every repeat was measured); 1 otherwise, saying how
// many rows did not run and how many missed (how many repeats were not
// measured); 2 when the command line was refused.
package main
