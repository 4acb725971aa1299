// Command mutants proves that the tests of the stats and gsocheck packages,
// and the pure tests of the link's model (the emulator's trace, blackout
// and flow-sample arithmetic, shapedlink's schedules and jitter
// distribution, the line of held frames and the carrier's steps, the
// in-process link's clock and its receiver's checks), and of the live
// SPICE session's analysis (censored keys, the arms' order, the picture
// rule, the verdicts recomputed from samples), can fail. It applies one deliberate breakage at a time to
// a copy of the packages, runs the tests that must catch it, and exits
// non-zero unless every breakage makes a test fail (the mutant is
// "killed"). A breakage whose text is no longer in the source is reported
// as stale, also a failure, so the list cannot rot silently.
//
// Run it from the module root: go run ./internal/mutants
package main
