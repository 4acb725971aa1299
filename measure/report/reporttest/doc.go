// Package reporttest builds synthetic quicbench results for tests of
// anything that reads them: a matrix whose per-repeat percentiles are
// chosen exactly, so a test can check the summary against figures it knows.
//
// Seed reproduces the original Rust bench's 80 ms / 10 Mbit table (its Cubic
// headline) as reno cells, plus one cubic sensitivity cell: five repeats
// per arm, that bench's p50, p99, samples per run and throughput, and
// per-repeat p95s chosen so that the medians, ranges and spreads match its
// table. Every run also has ten samples inside the 5 s warm-up with a
// 900 ms round trip, so a reader that forgets to discard the warm-up gets
// visibly wrong percentiles.
//
// Write stores runs under a work directory exactly as the headline command
// does (results.RunDir, results.WriteJSON).
package reporttest
