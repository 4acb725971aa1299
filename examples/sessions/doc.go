// Command sessions asks what happens when several sessions share one
// bottleneck: N sessions of the five SPICE-shaped channels run at once over
// one shaped link, as per-channel TCP (5N connections), one QUIC connection
// per session (N connections, one congestion window each), and QUIC per
// channel (5N connections), interleaved. Each N is a cell of its own
// (directory suffix _s<N>); every session's interactive round trips and
// saturating-channel throughput are recorded, and the summary adds a table
// of per-session p95 and Jain's fairness index over the sessions'
// saturating channels.
//
//	go run ./examples/sessions -quick
//	go run ./examples/sessions                       # N = 1 2 4 8 at 80:10, 0% and 1% loss
//	go run ./examples/sessions -sessions "2 4" -losses 1 -repeats 5
//
// The server and the client are each one process holding every session, as
// a proxy would; the link, not the processes, is the shared resource being
// asked about, but on a small machine check the CPU table before reading
// the largest N.
package main
