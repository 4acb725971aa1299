// Command headline runs Kerbside's question as a matrix: five
// SPICE-shaped channels as five TCP connections against one QUIC connection
// with five streams, over shaped, lossy links, with the kernel's TCP pinned to
// reno to match quic-go's NewReno. It writes one results directory per cell,
// arm and repeat (resumable) and prints the summary at the end. It exits 0
// when every run was measured, 1 when some failed (and says how many), 2
// when its input or work directory was refused, 130 when interrupted.
//
//	go run ./examples/headline -quick         # 80:10 at 1%, 3 x 30 s, compared with the full matrix
//	go run ./examples/headline                 # the full matrix: 2 profiles x 3 losses x 5 x 45 s
//	PROFILES="80:10 150:2" LOSSES="0 1 2" REPEATS=5 DURATION=45 WARMUP=5 \
//	    WORKDIR=results/ref go run ./examples/headline
package main
