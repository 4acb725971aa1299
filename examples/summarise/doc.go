// Command summarise reads a quicbench results directory and prints the
// summary: per profile the interactive round trip's p50, p95 and p99 by loss
// and arm, the reading of each QUIC arm against TCP by the run-to-run spread
// rule (with the order-statistic interval and the U test beside it),
// throughput, connect time, the offload check per QUIC cell, warnings, and
// the host state and link.
//
// Usage:
//
//	summarise [-json] [-plots DIR] [-warmup DURATION] WORKDIR [WORKDIR ...]
//
// Several WORKDIRs are the work directories of one matrix's shards (each
// run with -shard i/n, see docs/shards.md): they are merged into one summary
// after checking that they hold the same matrix, each shard once and each
// run once. Runs no directory holds yet are listed on standard error.
//
// A run counts only at <cell>/<arm>/r<N>/run.json and only when its record
// names that cell, arm and repeat; any other run.json (a run directory
// copied aside as r1.bak, a record copied into another repeat's place) is
// listed on standard error as ignored, with the reason, and not counted.
// Where a work directory has matrix.json, a run whose duration is not the
// matrix's is refused. Records are read only from regular files of at most
// 1 GiB (a named pipe or a link to a device is refused at once), and a
// record whose cell or arm is not a plain name (a congestion control of
// ../../X) is refused, so nothing a record says can place a plot outside
// -plots DIR.
//
// Markdown goes to standard output; -json prints the same figures as JSON
// instead. -plots DIR also writes PNG and SVG plots (CDFs, p95 per repeat,
// throughput) and an index, plots.md, with their captions, and, when runs
// carried cross flows, neighbours.csv (docs/neighbours.md). -warmup replaces
// the warm-up the runs recorded, for example -warmup 10s.
//
// The rendering lives in measure/report so that other commands can
// print the same summary after a run.
package main
