// Command cpucost measures what each arm costs the machine: CPU time of the
// server and client processes per MB the saturating channel delivered, and
// their peak resident memory, at the headline profiles and at 100 Mbit/s
// and 1 Gbit/s, without loss. The summary's "CPU and memory" table has the
// figures; the usual round-trip tables come with them.
//
//	go run ./examples/cpucost
//	go run ./examples/cpucost -quick
//
// On a 2-core machine the shaper, server and client share the cores, so at
// 1 Gbit/s the arms may be CPU-bound rather than link-bound: compare the
// throughput table before reading CPU per MB as a property of the arm alone.
//
// The links carry wire-sized packets, as the reference bench's did, which
// costs the ends' stacks per packet. With -offload keep the ends keep
// their segmentation offloads and the emulator judges every wire segment,
// so the 1 Gbit/s cell measures the arms rather than the link's ends
// (docs/cpucost.md has the commands; give -backend emulator where the
// kernel has netem, which judges a super-packet whole):
//
//	go run ./examples/cpucost -backend emulator -offload keep -profiles 5:1000 -workdir results/cpucost-keep
package main
