package calibrate

// The report's names of the two offload modes. A report written before
// calibrate recorded the mode has none: it measured wire-sized links.
const (
	offloadWire = "wire"
	offloadKeep = "keep"
)

// The labels (Iperf.Label) of the iperf3 series' bare pairs: the
// machine's own ceilings, with the devices' offloads as the kernel has
// them and pinned to wire-sized packets.
const (
	bareKeepLabel = "bare veth, offloads on"
	bareWireLabel = "bare veth, wire-sized"
)

// modeOf is a recorded mode as the report's name: "" (a report from
// before the mode was recorded) is wire.
func modeOf(recorded string) string {
	if recorded == "" {
		return offloadWire
	}
	return recorded
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
