// Package shapedlinktest puts a shaped link under a Go test in two lines:
//
//	func TestMain(m *testing.M) { shapedlinktest.Main(m) }
//
//	func TestOverTheLink(t *testing.T) {
//		link := shapedlinktest.New(t, "80:10:1")
//		client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
//		...
//	}
//
// New builds the link from a profile (shapedlink's grammar), closes it when
// the test ends, and fails the test if the link broke while it ran (the
// emulator's shaper process died). Where this machine cannot build links at
// all (not root, and no unprivileged user namespaces), New skips the test
// and says why; a link that fails to build where links can be built fails
// the test.
//
// A link shapes the packets its senders hand it. quic-go on Linux sends
// with UDP segmentation offload (GSO): one write of up to 64 datagrams,
// which leaves the sender as one super-packet, so netem queues and loses
// it as one packet. When that happened, New's cleanup logs how many
// super-packets left each end and names the fix, transport.WithoutGSO
// around the socket given to quic-go; the test still passes, since a test
// may mean to use GSO. RequireNoGSO makes such packets fail the test:
//
//	link := shapedlinktest.New(t, "80:10:1")
//	shapedlinktest.RequireNoGSO(t, link)
//	pc, err := link.Server().ListenPacket(ctx, "udp", addr)
//	...
//	pc, err = transport.WithoutGSO(pc) // quic-go then sends one datagram per write
//	tr := &quic.Transport{Conn: pc}
//
// Those are links of wire-sized packets, the zero shapedlink.Options. A
// test that needs a host's throughput (more than a few hundred Mbit/s)
// asks for the ends to keep their offloads:
//
//	link := shapedlinktest.New(t, "2:5000", shapedlink.Options{Offload: shapedlink.OffloadKeep})
//
// The emulator then judges every wire segment of a super-packet on its
// own, so quic-go may keep its GSO; New reports no super-packets on such
// a link, and RequireNoGSO refuses it.
//
// Main lets an ordinary user run such tests: it re-executes the test
// binary inside a user and network namespace of its own, as a program's
// main does with shapedlink.Reexec, and runs the tests there.
//
// # In process, in virtual time
//
// Sim builds the link inside the test's process instead
// (shapedlink.BackendInProcess): the same model, no namespace and no
// privilege, on any operating system. Its ends make UDP sockets
// (net.PacketConns) whose datagrams cross the shaped link. Given the *testing.T
// of a testing/synctest bubble it runs in the bubble's virtual time, so a
// minute of traffic takes as long as the endpoints' code takes, and with
// the same seeds and the same writes every run sees the same packets at
// the same times (shapedlink.Options.PacketTrace shows them):
//
//	func TestOverASimulatedLink(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			shapedlinktest.Deterministic(t, 1) // for runs that repeat
//			link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 1})
//			pc, err := link.Server().ListenPacket(t.Context(), "udp", ":4433")
//			...
//			tr := &quic.Transport{Conn: pc} // quic-go takes it as it is
//		})
//	}
//
// For the run to repeat, the endpoints must too: Deterministic, called
// at the start of the test, gives the process one P, seeds crypto/rand
// (quic-go's connection IDs, packet number skips, TLS) and stops the
// garbage collector until the test ends; docs/virtual-time.md says what
// then repeats and what may not. quic-go v0.65 with an initial packet
// size above 1280 bytes spins in its send loop while its pacing budget
// lies between 1280 and that size (its pacer keeps 1280); in real time
// that passes, in a bubble time stands still while it spins, so it never
// does: give quic-go 1280 in virtual time (transport's arms refuse more
// there).
//
// The in-process link carries datagrams only. A stream (TCP) side could
// come from a userspace stack such as gVisor's netstack, as wireguard-go's
// tun/netstack uses it, fed by the same link; it is not here, because it
// would add a large dependency to every importer of this package, and
// whether netstack runs cleanly in a synctest bubble (its clock supplied,
// its goroutines all ending, none blocked outside the bubble) is
// unverified. A test that needs TCP uses New.
package shapedlinktest
