package calibrate

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// bareCeilings is what the bare veth pair carried in each offload
// setting in one run, by mode name; a setting not measured (or failed)
// is absent. A report from before the offload was recorded has one bare
// pair, wire-sized.
func bareCeilings(fs []Iperf) map[string]float64 {
	bare := map[string]float64{}
	for _, f := range fs {
		if f.Backend == "none" && f.Error == "" {
			bare[modeOf(f.Offload)] = f.Mbit
		}
	}
	return bare
}

// printIperf is the iperf3 table: each flow's goodput, its wire share of
// the rate against its offload mode's target (the unlimited link against
// a bare pair instead), its goodput as a share of each bare pair measured
// in the same run, and the emulator's CPU per GB and per wire packet
// forwarded.
func printIperf(w io.Writer, fs []Iperf) {
	if len(fs) == 0 {
		return
	}
	bare := bareCeilings(fs)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	unjudged := map[string]bool{}
	fmt.Fprintln(tw, "iperf3 cubic\toffload\tprofile\tMbit/s\tretr\tgoodput\twire\ttarget\t\tof bare on\tof bare wire\tcpu s/GB\tcpu/frame\tsegs/write\t")
	for _, f := range fs {
		mode := modeOf(f.Offload)
		if f.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\terror\t\n", f.Label, mode, f.Profile)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%d\t", f.Label, mode, f.Profile, f.Mbit, f.Retransmits)
		if iperfTargetCells(tw, f, bare) {
			unjudged[mode] = true
		}
		for _, m := range []string{offloadKeep, offloadWire} {
			if b := bare[m]; b > 0 && !(f.Backend == "none" && mode == m) {
				fmt.Fprintf(tw, "%.1f%%\t", 100*f.Mbit/b)
			} else {
				fmt.Fprintf(tw, "-\t")
			}
		}
		if f.CPUSecPerGB > 0 {
			fmt.Fprintf(tw, "%.2f\t", f.CPUSecPerGB)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		if f.CPUNsPerFrame > 0 {
			fmt.Fprintf(tw, "%.2fus\t", f.CPUNsPerFrame/1000)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		if f.FramesOut > 0 {
			fmt.Fprintf(tw, "%.2f\t\n", float64(f.Segments)/float64(f.FramesOut))
		} else {
			fmt.Fprintf(tw, "-\t\n")
		}
	}
	tw.Flush()
	for _, f := range fs {
		if f.Error != "" {
			fmt.Fprintf(w, "iperf3 %s: %s\n", f.Label, f.Error)
		}
	}
	for _, m := range []string{offloadKeep, offloadWire} {
		if unjudged[m] {
			fmt.Fprintf(w, "n/a: the target is above the %.1f Mbit/s the same flow got over the bare veth pair (%s) in this run, so it cannot be judged on this machine\n", bare[m], bareName(m))
		}
	}
	fmt.Fprintln(w, "of bare on/wire: goodput as a share of the bare veth pair's with its offloads on / wire-sized, in this run; cpu s/GB: the emulator's CPU seconds per 10^9 bytes it forwarded, both directions; segs/write: wire segments per frame the emulator wrote")
	for _, f := range fs {
		if f.Early > 0 {
			fmt.Fprintf(w, "iperf3 %s: %d segments left ahead of their due time within the departure window, at most %.3f ms\n", f.Label, f.Early, f.EarlyMaxMs)
		}
	}
}

// iperfTargetCells writes f's goodput, wire and target cells and says
// whether its target was beyond the bare pair (n/a). A shaped flow's wire
// share is judged against its mode's target for the rate, the unlimited
// link's goodput against its mode's share of a bare pair.
func iperfTargetCells(tw io.Writer, f Iperf, bare map[string]float64) (unjudged bool) {
	mode := modeOf(f.Offload)
	switch {
	case f.RateMbit > 0:
		t := iperfTarget(mode, f.RateMbit)
		verdict := mark(f.WirePct >= t)
		if b := bare[mode]; b > 0 && b < f.RateMbit*t/100 {
			// The machine cannot carry this rate even without the
			// emulator; the target says nothing here.
			verdict, unjudged = "n/a", true
		}
		fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t>= %.0f%%\t%s\t", f.GoodputPct, f.WirePct, t, verdict)
	case f.Backend != "none":
		pct, bm := unlimitedTarget(mode)
		if b := bare[bm]; b > 0 {
			fmt.Fprintf(tw, "-\t-\t>= %.0f%% of bare %s\t%s\t", pct, bareShort(bm), mark(f.Mbit >= pct/100*b))
		} else {
			fmt.Fprintf(tw, "-\t-\t>= %.0f%% of bare %s\t-\t", pct, bareShort(bm))
		}
	default:
		fmt.Fprintf(tw, "-\t-\t\t\t")
	}
	return unjudged
}

// bareName describes the bare pair of mode m.
func bareName(m string) string {
	if m == offloadKeep {
		return "offloads on"
	}
	return "wire-sized"
}

// bareShort is the bare pair's name in the table's column heads.
func bareShort(m string) string {
	if m == offloadKeep {
		return "on"
	}
	return "wire"
}
