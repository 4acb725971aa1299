// Package neighbours says what a session costs the traffic beside it: for
// runs whose link carried cross flows (the profile's cross option,
// results.Link.Cross), each cross flow's goodput over the run's measured
// window, Jain's fairness index over the session's display goodput and
// the cross flows in the display's direction, the session's own
// retransmission rate and the cross flows'.
//
// The measured window is [SamplesStart+Warmup, SamplesStart+Duration]; a
// cross flow's goodput counts its 100 ms bins that lie wholly inside it.
// Jain's index is (Σx)² / (n·Σx²) over each session's display goodput
// (Run.ThroughputMbit, or each of several sessions') and each cross
// flow's goodput. The session's retransmission rate is its server's
// retransmitted over sent packets, summed over its connections (TCP_INFO
// total_retrans over segs_out; quic-go's packets lost over sent); a cross
// flow's is its sender's count. Per cell and arm the figures are medians
// over the measured repeats, and the cross goodput is read against the
// same cell's tcp arm on reno as a ratio. Runs without cross flows are
// left out; failed runs are counted but not measured.
//
// Use:
//
//	runs, err := results.Load(workdir)
//	if err != nil { ... }
//	t, err := neighbours.Build(runs)
//	if err != nil { ... }
//	if t != nil {
//		err = t.WriteMarkdown(os.Stdout)
//	}
//
// docs/neighbours.md says what the figures mean.
package neighbours
