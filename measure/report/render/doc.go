// Package render writes a quicbench summary (a report.Report) for a
// reader: markdown tables and the plots beside them.
//
// The markdown has, in order: one section per congestion-control setting
// (the headline, matched cells first, then each sensitivity setting,
// labelled as such), each with a table per profile (loss | arm | p50 | p95
// | p99 | p95 spread | p95 range | samples/run | timeouts | repeats) and a
// reading table per pair of arms; a sessions section for cells that
// carried several sessions; the capped-display section; the neighbours
// section for runs with cross flows (package measure/neighbours, whose
// per-run figures WriteNeighbours writes as neighbours.csv); throughput per
// cell and arm; connect time per profile and arm; the offload check per
// QUIC cell; the CPU cost; recovery after scheduled link changes; a
// warnings section ("None" when there is nothing); and the host state and
// the link as applied, from the first run. WritePlots draws, per cell, the
// round trips' CDF, each repeat's p95 and the throughput, as PNG and SVG,
// indexed in PlotIndex.
//
// Use:
//
//	runs, err := results.Load(workdir)
//	if err != nil { ... }
//	err = render.Markdown(os.Stdout, runs, report.Options{Source: workdir})
//	files, err := render.Plots(workdir+"/plots", runs, report.Options{})
package render
