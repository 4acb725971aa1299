// Package stats turns interactive round-trip samples from repeated runs into
// the figures a transport comparison is read by, and into a verdict that says
// only what the run-to-run spread lets it say.
//
// The method, stated exactly:
//
//   - Percentiles are nearest-rank: the p-th percentile of n values is the
//     r-th smallest, r = ceil(p*n/100) (at least 1). No interpolation; the
//     answer is always an observed value.
//   - A repeat's samples that started inside the warm-up are discarded
//     (SummariseRepeat); the rest give that repeat's own p50, p95 and p99.
//   - A cell's p50, p95 and p99 are the medians over repeats of each repeat's
//     own percentile, never a percentile of pooled samples, so one bad repeat
//     cannot dominate and the run-to-run variation stays visible
//     (SummariseCell). The p95 spread is the highest minus the lowest repeat
//     p95. Timeouts and repeats that could not be measured are counted, never
//     dropped.
//   - Compare reads arm B against arm A: delta = B.p95 - A.p95, threshold =
//     the wider of the two spreads, and the verdict is Worse, Better or
//     Unresolved (|delta| <= threshold). Its doc comment defines the edge
//     cases.
//
// Beside the spread rule, and never instead of it, each cell carries a
// distribution-free confidence interval for its median p95 (order
// statistics, as benchstat computes for medians) and Compare a two-sided
// Mann-Whitney U test between the arms' repeat p95s. Both say when there are
// too few repeats for them to mean anything: five repeats cannot give a 95%
// interval on a median, and three against three cannot reach p <= 0.05.
//
// Before a long run, EstimateRepeats reads a pilot's repeat p95s and
// estimates, by a seeded simulation under a stated model (RepeatsModel), the
// repeats per arm at which the spread rule and the U test would resolve the
// arms. The range of n repeats grows with n, so by the spread rule more
// repeats can make resolving less likely; the estimate says so when no n up
// to its cap is enough.
//
// The package knows nothing but numbers: it does not know what a transport,
// link or workload is.
package stats
