// Package report turns the runs of a quicbench matrix (results.Load) into
// the summary a transport engineer reads: markdown tables, the same figures
// as JSON, and plots.
//
// It computes nothing statistical itself. Every figure comes from package
// stats, by its spread rule: per cell and arm, the p50, p95 and
// p99 are medians over repeats of each repeat's own percentile after the
// warm-up (stats.SummariseCell); the reading of one arm against another is
// stats.Compare (delta of median p95s against the wider of the two arms'
// p95 spreads, "unresolved" when it does not exceed it), with the
// order-statistic interval for each arm's median p95 and a Mann-Whitney U
// test printed beside the rule, never instead of it. Offload evidence is
// gsocheck's, per run, gathered per arm.
//
// Build makes a Report once: per cell and arm the figures, the readings
// between arms, throughput, connect times, offload evidence, CPU cost,
// recovery after scheduled link changes and the warnings. WriteJSON writes
// it as JSON; package measure/report/render
// writes it as markdown and plots:
//
//	runs, err := results.Load(workdir)
//	if err != nil { ... }
//	rep, err := report.Build(runs, report.Options{Source: workdir})
//	if err != nil { ... }
//	err = render.WriteMarkdown(os.Stdout, rep)
//
// The warnings list every cell and arm with a timeout, an unmeasured
// repeat or offload not verified off, and runs whose link kept
// segmentation offload on netem, which judged kernel TCP's super-packets
// whole.
//
// Cells set apart from the headline's are titled so (CellTitle): "80 ms /
// 10 Mbit, 4 sessions", "80 ms / 10 Mbit, display capped at 50% (5
// Mbit/s)". Runs that carried several sessions (results.Cell.Sessions) get
// a sessions section after the headline tables: per cell and arm, the
// all-session p95 (each repeat's p95 over every session's round trips
// together, then the median over repeats with its spread, read between arms
// with stats.Compare), each session's own cell figures, and Jain's fairness
// index over the sessions' saturating-channel throughputs per
// repeat, as median and range. The per-profile tables show session 0 of
// such cells. Runs with a capped display (results.Cell.BulkCapFraction) get
// a section that lists, per loss level, the QUIC-against-TCP reading at
// every cap beside the uncapped cell of the same runs.
//
// Arms are listed in measure's registration order (measure.ArmNames: the
// built-in arms, then an importer's in the order it registered them), and
// an arm this process has not registered, read from an archive, after
// them by name.
//
// The warm-up is the one the runs recorded unless Options overrides it;
// runs of one arm that recorded different warm-ups are an error rather than
// a silent choice.
package report
