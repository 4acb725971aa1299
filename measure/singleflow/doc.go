// Package singleflow measures one bulk flow at a time over a shaped link,
// to compare congestion controllers rather than transports: quic-go's
// controller against kernel TCP's (reno, cubic, bbr, or the quicreno BPF
// controller that copies quic-go's).
//
// For each profile and loss level, each flow sends from the link's server
// to its client for Config.Duration over a fresh link, flows interleaved
// within every repeat. A Result has the goodput after the warm-up, the
// window after each loss episode over the window before it (TCP_INFO
// sampled every 5 ms on the sender, or quic-go's qlog), the sender's
// initial window and what the receiver read in its first 0.9 RTT.
// Summarise groups runs into cells; Markdown shows them and applies the project's rule
// (the difference of medians against the wider of the two spreads).
//
//	rs, err := singleflow.Run(ctx, singleflow.Defaults(), nil)
//	fmt.Print(singleflow.Markdown(singleflow.Summarise(rs), "tcp-quicreno", "quic"))
//
// A work directory's results.json is a Record: NewRecord writes the
// settings, Write adds the runs as they end, and Resume reads them back
// for a rerun with the same settings, whose Config.Skip (Measured) passes
// over the runs already measured; a failed run is run again and Replace
// puts its new outcome in its place.
//
// Both ends run as goroutines of the calling process; a flow using
// quicreno needs root in the initial user namespace to load it.
// examples/singleflow is the command.
package singleflow
