package netemnl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// NoSeed ends an applied line whose netem reported no PRNG seed.
const NoSeed = "(no seed: this kernel's netem has no TCA_NETEM_PRNG_SEED, added in Linux 6.6, so its random draws cannot be repeated)"

// Extras is what a root netem's dump holds beyond what the netlink
// library parses: its Gilbert-Elliott or 4-state loss model and its PRNG
// seed (which kernels from 6.6 report for every netem, seeded by the
// caller or at random).
type Extras struct {
	GE           GEModel
	HasGE        bool
	FourState    linkspec.FourStateNetem
	HasFourState bool
	Seed         uint64
	HasSeed      bool
}

// ExtrasOf reads the Extras of the root netem among qs (one device's
// qdiscs, from ParseDump).
func ExtrasOf(qs []Qdisc) (x Extras, err error) {
	for _, q := range qs {
		if q.Kind != "netem" || q.Parent != netlink.HANDLE_ROOT {
			continue
		}
		// tc_netem_qopt (six u32), then the nested attributes.
		const qopt = 24
		if len(q.Options) < qopt {
			return x, errors.New("netem options shorter than tc_netem_qopt")
		}
		nested, err := nl.ParseRouteAttr(q.Options[qopt:])
		if err != nil {
			return x, err
		}
		for _, at := range nested {
			switch at.Attr.Type &^ unix.NLA_F_NESTED {
			case tcaNetemPRNGSeed:
				if len(at.Value) >= 8 {
					x.Seed, x.HasSeed = binary.NativeEndian.Uint64(at.Value), true
				}
			case tcaNetemLoss:
				models, err := nl.ParseRouteAttr(at.Value)
				if err != nil {
					return x, err
				}
				for _, lm := range models {
					if lm.Attr.Type == netemLossGE && len(lm.Value) >= 16 {
						v := func(i int) uint32 { return binary.NativeEndian.Uint32(lm.Value[4*i:]) }
						x.GE, x.HasGE = GEModel{P: v(0), R: v(1), H: v(2), K1: v(3)}, true
					}
					if lm.Attr.Type == netemLossGI && len(lm.Value) >= 20 {
						v := func(i int) uint32 { return binary.NativeEndian.Uint32(lm.Value[4*i:]) }
						x.FourState, x.HasFourState = linkspec.FourStateNetem{P13: v(0), P31: v(1), P32: v(2), P14: v(3), P23: v(4)}, true
					}
				}
			}
		}
	}
	return x, nil
}

// ReadBack describes netem n as read back, with its Extras x, in tc's
// words, and the distribution d sent (the kernel does not report its
// table). It fails when the kernel holds a loss model other than d's.
func ReadBack(n *netlink.Netem, x Extras, d linkspec.Direction) (string, error) {
	line := describe(n)
	if x.HasGE {
		line += " " + x.GE.String()
	}
	if x.HasFourState {
		line += " " + fourStateString(x.FourState)
	}
	if x.HasGE != d.HasGE {
		return "", fmt.Errorf("netem reads back %q; the profile asked for Gilbert-Elliott loss: %v", line, d.HasGE)
	}
	if x.HasFourState != d.HasFourState {
		return "", fmt.Errorf("netem reads back %q; the profile asked for 4-state loss: %v", line, d.HasFourState)
	}
	if d.JitterDist != "" {
		line += " distribution " + d.JitterDist + " (as sent; netem does not report its table)"
	}
	return line, nil
}

// describe renders netem n in tc's words and order ("netem limit 110
// delay 40ms loss 1% rate 10Mbit"), converting the kernel's scheduler
// ticks and u32 fractions back.
func describe(n *netlink.Netem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "netem limit %d", n.Limit)
	us := float64(n.Latency) / netlink.TickInUsec()
	fmt.Fprintf(&b, " delay %s", fmtMicros(us))
	// term writes " name P [CORR]" for a process in force, as tc does.
	term := func(name string, v, corr uint32) bool {
		if v == 0 {
			return false
		}
		fmt.Fprintf(&b, " %s%s", name, pct(v))
		if corr != 0 {
			fmt.Fprintf(&b, " %s", pct(corr))
		}
		return true
	}
	if n.Jitter != 0 {
		fmt.Fprintf(&b, " %s", fmtMicros(float64(n.Jitter)/netlink.TickInUsec()))
		if n.DelayCorr != 0 {
			fmt.Fprintf(&b, " %s", pct(n.DelayCorr))
		}
	}
	term("loss ", n.Loss, n.LossCorr)
	term("duplicate ", n.Duplicate, n.DuplicateCorr)
	if term("reorder ", n.ReorderProb, n.ReorderCorr) {
		fmt.Fprintf(&b, " gap %d", n.Gap)
	}
	term("corrupt ", n.CorruptProb, n.CorruptCorr)
	if n.Rate64 != 0 {
		fmt.Fprintf(&b, " rate %s", fmtBitRate(n.Rate64*8))
	}
	return b.String()
}

// fmtMicros prints microseconds as tc does: "40ms", "40.5ms", "500us".
func fmtMicros(us float64) string {
	us = math.Round(us)
	if us >= 1000 {
		return strconv.FormatFloat(us/1000, 'f', -1, 64) + "ms"
	}
	return strconv.FormatFloat(us, 'f', -1, 64) + "us"
}

// fmtBitRate prints bits per second as tc does: "10Mbit", "1Gbit",
// "2.5Mbit".
func fmtBitRate(bps uint64) string {
	switch {
	case bps >= 1e9 && bps%1e7 == 0:
		return strconv.FormatFloat(float64(bps)/1e9, 'f', -1, 64) + "Gbit"
	case bps >= 1e6:
		return strconv.FormatFloat(float64(bps)/1e6, 'f', -1, 64) + "Mbit"
	case bps >= 1e3:
		return strconv.FormatFloat(float64(bps)/1e3, 'f', -1, 64) + "Kbit"
	}
	return strconv.FormatUint(bps, 10) + "bit"
}
