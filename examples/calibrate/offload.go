package main

import (
	"fmt"
	"strings"

	"github.com/shakenfist/quicbench/shapedlink"
)

// The report's names of the two offload modes. A report written before
// calibrate had -offload has no mode: it measured wire-sized links.
const (
	offloadWire = "wire"
	offloadKeep = "keep"
)

// The iperf3 series' bare pairs' labels: the machine's own ceilings, with
// the devices' offloads as the kernel has them and pinned to wire-sized
// packets.
const (
	bareKeepLabel = "bare veth, offloads on"
	bareWireLabel = "bare veth, wire-sized"
)

// parseOffload reads -offload: "wire" (the default: every device pinned
// to wire-sized packets, the link the bench uses) or "keep" (the ends
// keep their segmentation offloads; the emulator judges each wire
// segment of their super-packets).
func parseOffload(s string) (shapedlink.OffloadMode, error) {
	m, err := shapedlink.ParseOffloadMode(s)
	if err != nil {
		return "", fmt.Errorf("-offload %w", err)
	}
	return m, nil
}

// modeOf is a recorded mode as the report's name: "" (a report from
// before the mode was recorded) is wire.
func modeOf(recorded string) string {
	if recorded == "" {
		return offloadWire
	}
	return recorded
}

// parseFixedProfile reads the profile of -gsoloss or -quicgso; "" is
// none (ok false). Their figures count what the link's loss took, so a
// profile whose link also duplicates, corrupts or reorders, or whose
// rate or delay follows a schedule or a trace, is refused.
func parseFixedProfile(flagName, s string) (p shapedlink.Profile, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return shapedlink.Profile{}, false, nil
	}
	if p, err = shapedlink.ParseProfile(s); err != nil {
		return shapedlink.Profile{}, false, fmt.Errorf("%s: %w", flagName, err)
	}
	for _, d := range []shapedlink.Dir{shapedlink.Down, shapedlink.Up} {
		pd := p.Direction(d)
		var what []string
		for _, o := range []struct {
			on   bool
			name string
		}{{pd.DupPct > 0, "dup"}, {pd.CorruptPct > 0, "corrupt"}, {pd.ReorderPct > 0, "reorder"}, {pd.Schedule != "", "schedule"}, {pd.Trace != "", "trace"}} {
			if o.on {
				what = append(what, o.name)
			}
		}
		if len(what) > 0 {
			return shapedlink.Profile{}, false, fmt.Errorf("%s %q: its %s direction has %s; this measurement counts what the link's loss takes on a fixed link, so give a profile with a rate, a delay, loss (independent or ge:) and a limit only, e.g. 5:2000:0.1", flagName, s, d, strings.Join(what, ", "))
		}
	}
	return p, true, nil
}

// iperfTarget is the wire share of the rate an iperf3 flow must reach in
// mode: on a wire-sized link 95% up to 1 Gbit/s and 90% above; on one
// keeping offloads 97% up to 1 Gbit/s, 95% up to 2 Gbit/s and 90% above.
func iperfTarget(mode string, rateMbit float64) float64 {
	if modeOf(mode) == offloadKeep {
		switch {
		case rateMbit <= 1000:
			return 97
		case rateMbit <= 2000:
			return 95
		}
		return 90
	}
	if rateMbit > 1000 {
		return 90
	}
	return 95
}

// unlimitedTarget is what the unlimited link must carry in mode, as a
// share of a bare pair, and which bare pair: on a wire-sized link 90% of
// the wire-sized pair; keeping offloads, 25% of the pair with its
// offloads on (the machine's own ceiling).
func unlimitedTarget(mode string) (pct float64, bareMode string) {
	if modeOf(mode) == offloadKeep {
		return 25, offloadKeep
	}
	return 90, offloadWire
}
