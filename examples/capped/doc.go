// Command capped asks whether the shared congestion window's penalty
// shrinks or vanishes when the display channel does not saturate: the
// headline's arms (tcp, quic) with the saturating channel paced to a
// fraction of the link rate (spicelike's Config.BulkRateCap, bits per
// second of payload), one cell per cap (directory suffix _cap<fraction>).
// The default caps include 0, the uncapped headline cell measured in the
// same run, so every capped reading has its uncapped reference beside it
// under the same conditions.
//
//	go run ./examples/capped -quick
//	go run ./examples/capped                  # caps 0 0.5 0.8 at 80:10, losses 0 1 2
//	go run ./examples/capped -caps "0.5 0.8"  # capped cells only; compare with a headline run
//
// The cap counts payload, the link's rate counts wire bytes: a cap of 0.8
// on a 10 Mbit/s link is 8 Mbit/s of payload, about 8.4 Mbit/s on the wire
// for TCP's 1448-byte segments and a little more for QUIC's 1400-byte
// datagrams.
package main
