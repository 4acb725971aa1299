// Package summary reads a live SPICE work directory (measure/spicelive)
// into what is reported: the markdown summary (Summarise), the per-key
// samples for docs/results (WriteSamples, KeysCSV and RunsCSV), and the
// figures and verdicts recomputed from such samples (VerdictsFromSamples).
//
// Summarise reads every reading's runs per cell and arm by the headline's
// rule (stats.SummariseCell, stats.Compare), gives each unresolved verdict
// and every verdict of a lossy cell the repeats its spread would need,
// marks runs taken on a late emulator or a saturated host, and, with
// Config.Control, checks the control and fails when
// it does not hold. docs/spice-live.md says what each table means.
//
// Use:
//
//	c, err := spicelive.LoadConfig(workdir)
//	if err != nil { ... }
//	err = summary.Summarise(os.Stdout, c)
//	err = summary.WriteSamples("docs/results/mine", c)
//	v, err := summary.VerdictsFromSamples("docs/results/mine")
package summary
