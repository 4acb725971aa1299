package shapedlink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// This file is netem's own options for a direction, both ways: what is
// written (netemAttrs, netemOptions) and how the kernel's dump reads back
// (describeNetem, readNetemExtras), in tc's words.

// Attribute numbers of include/uapi/linux/pkt_sched.h that the netlink
// library does not name.
const (
	tcaNetemDelayDist = 2 // TCA_NETEM_DELAY_DIST: the table, s16 each
	tcaNetemLoss      = 5 // TCA_NETEM_LOSS, a nest of one loss model
	netemLossGE       = 2 // NETEM_LOSS_GE: struct tc_netem_gemodel {p, r, h, k1}
	netemLossGI       = 1 // NETEM_LOSS_GI: struct tc_netem_gimodel {p13, p31, p32, p14, p23}
	// TCA_NETEM_LATENCY64 and TCA_NETEM_JITTER64 (s64 nanoseconds, Linux
	// 4.15 and later) override tc_netem_qopt's latency and jitter, which
	// are in 64 ns scheduler ticks: 500 us is 7812.5 ticks there, so only
	// these carry every whole microsecond exactly.
	tcaNetemLatency64 = 10
	tcaNetemJitter64  = 11
	// TCA_NETEM_PRNG_SEED (u64), Linux 6.6 and later; older kernels
	// ignore it (attributes past their maximum are skipped) and do not
	// report one.
	tcaNetemPRNGSeed = 14
)

// geModel is struct tc_netem_gemodel as the kernel holds it: each a
// probability as a fraction of 2^32-1. h is the probability of no loss in
// the bad state (tc's "1-h" complemented), k1 the loss probability in the
// good state (tc's "1-k").
type geModel struct{ P, R, H, K1 uint32 }

// netemProb encodes a percentage as netem's u32 probability, as tc's
// get_percent does (rounded fraction of 2^32-1).
func netemProb(pct float64) uint32 {
	return uint32(math.Round(pct / 100 * math.MaxUint32))
}

func encodeGE(g GE) geModel {
	return geModel{P: netemProb(g.P), R: netemProb(g.R), H: math.MaxUint32 - netemProb(g.OneMinusH), K1: netemProb(g.OneMinusK)}
}

func (m geModel) bytes() []byte {
	b := make([]byte, 16)
	for i, v := range []uint32{m.P, m.R, m.H, m.K1} {
		binary.NativeEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// String is the model in tc's words: "loss gemodel p 1% r 30% 1-h 100% 1-k 0%".
func (m geModel) String() string {
	pct := func(v uint32) string {
		return strconv.FormatFloat(float64(v)/math.MaxUint32*100, 'g', 6, 64) + "%"
	}
	return fmt.Sprintf("loss gemodel p %s r %s 1-h %s 1-k %s", pct(m.P), pct(m.R), pct(math.MaxUint32-m.H), pct(m.K1))
}

// fourStateBytes is m as struct tc_netem_gimodel, in that struct's order.
func fourStateBytes(m linkspec.FourStateNetem) []byte {
	b := make([]byte, 20)
	for i, v := range []uint32{m.P13, m.P31, m.P32, m.P14, m.P23} {
		binary.NativeEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// fourStateString is m in tc's words: "loss state p13 2% p31 30% p32 20%
// p23 40% p14 1%".
func fourStateString(m linkspec.FourStateNetem) string {
	pct := func(v uint32) string {
		return strconv.FormatFloat(float64(v)/math.MaxUint32*100, 'g', 6, 64) + "%"
	}
	return fmt.Sprintf("loss state p13 %s p31 %s p32 %s p23 %s p14 %s", pct(m.P13), pct(m.P31), pct(m.P32), pct(m.P23), pct(m.P14))
}

// addNetemRaw adds netem qdisc q at the root of its link, in the
// namespace ns, with what the netlink library cannot write (netemOptions).
func addNetemRaw(ns *Namespace, q *netlink.Netem, d Direction, seed uint64) error {
	options, err := netemOptions(q, d, seed)
	if err != nil {
		return err
	}
	a := q.Attrs()
	return addQdiscRaw(ns, a.LinkIndex, a.Handle, a.Parent, "netem", options)
}

// netemOptions is netem's TCA_OPTIONS for q, built here: the options the
// library writes for q (tc_netem_qopt, correlations, reordering and the
// rate), then what it cannot write: d's delay and jitter in nanoseconds
// (TCA_NETEM_LATENCY64, TCA_NETEM_JITTER64), its Gilbert-Elliott or
// 4-state loss model (TCA_NETEM_LOSS), its jitter distribution table
// (TCA_NETEM_DELAY_DIST, from package disttable) and, when seed is not
// zero, the PRNG seed. The jitter's correlation is taken from d: the
// library drops it for a direction with no delay.
func netemOptions(q *netlink.Netem, d Direction, seed uint64) (*nl.RtAttr, error) {
	opt := nl.TcNetemQopt{Latency: q.Latency, Limit: q.Limit, Loss: q.Loss, Gap: q.Gap, Duplicate: q.Duplicate, Jitter: q.Jitter}
	options := nl.NewRtAttr(nl.TCA_OPTIONS, opt.Serialize())
	delayCorr := uint32(0)
	if d.Jitter > 0 {
		delayCorr = netlink.Percentage2u32(float32(d.JitterCorr))
	}
	if delayCorr > 0 || q.LossCorr > 0 || q.DuplicateCorr > 0 {
		corr := nl.TcNetemCorr{DelayCorr: delayCorr, LossCorr: q.LossCorr, DupCorr: q.DuplicateCorr}
		options.AddRtAttr(nl.TCA_NETEM_CORR, corr.Serialize())
	}
	options.AddRtAttr(tcaNetemLatency64, nl.Uint64Attr(uint64(d.Delay)))
	options.AddRtAttr(tcaNetemJitter64, nl.Uint64Attr(uint64(d.Jitter)))
	if q.ReorderProb > 0 {
		reorder := nl.TcNetemReorder{Probability: q.ReorderProb, Correlation: q.ReorderCorr}
		options.AddRtAttr(nl.TCA_NETEM_REORDER, reorder.Serialize())
	}
	if q.CorruptProb > 0 {
		corrupt := nl.TcNetemCorrupt{Probability: q.CorruptProb, Correlation: q.CorruptCorr}
		options.AddRtAttr(nl.TCA_NETEM_CORRUPT, corrupt.Serialize())
	}
	if d.JitterDist != "" {
		table, err := disttable.Table(d.JitterDist)
		if err != nil {
			return nil, err
		}
		b := make([]byte, 2*len(table))
		for i, v := range table {
			binary.NativeEndian.PutUint16(b[2*i:], uint16(v))
		}
		options.AddRtAttr(tcaNetemDelayDist, b)
	}
	if q.Rate64 > 0 {
		rate := nl.TcNetemRate{}
		if q.Rate64 >= 1<<32 {
			options.AddRtAttr(nl.TCA_NETEM_RATE64, nl.Uint64Attr(q.Rate64))
			rate.Rate = math.MaxUint32
		} else {
			rate.Rate = uint32(q.Rate64)
		}
		options.AddRtAttr(nl.TCA_NETEM_RATE, rate.Serialize())
	}
	if d.HasGE {
		loss := options.AddRtAttr(tcaNetemLoss|unix.NLA_F_NESTED, nil)
		loss.AddRtAttr(netemLossGE, encodeGE(d.GE).bytes())
	}
	if d.HasFourState {
		loss := options.AddRtAttr(tcaNetemLoss|unix.NLA_F_NESTED, nil)
		loss.AddRtAttr(netemLossGI, fourStateBytes(d.FourState.Netem()))
	}
	if seed != 0 {
		options.AddRtAttr(tcaNetemPRNGSeed, nl.Uint64Attr(seed))
	}
	return options, nil
}

// netemExtras is what readNetemExtras finds in a netem qdisc's dump
// beyond what the netlink library parses: its Gilbert-Elliott or 4-state
// model and its PRNG seed (TCA_NETEM_PRNG_SEED, which kernels from 6.6 report for
// every netem, seeded by the caller or at random).
type netemExtras struct {
	ge      geModel
	hasGE   bool
	four    linkspec.FourStateNetem
	hasFour bool
	seed    uint64
	hasSeed bool
}

// readNetemExtras reads back the root netem qdisc on ifindex in ns.
func readNetemExtras(ns *Namespace, ifindex int) (x netemExtras, err error) {
	qs, err := dumpQdiscs(ns, ifindex)
	if err != nil {
		return x, err
	}
	for _, q := range qs {
		if q.kind != "netem" || q.parent != netlink.HANDLE_ROOT {
			continue
		}
		// tc_netem_qopt (six u32), then the nested attributes.
		const qopt = 24
		if len(q.options) < qopt {
			return x, errors.New("netem options shorter than tc_netem_qopt")
		}
		nested, err := nl.ParseRouteAttr(q.options[qopt:])
		if err != nil {
			return x, err
		}
		for _, at := range nested {
			switch at.Attr.Type &^ unix.NLA_F_NESTED {
			case tcaNetemPRNGSeed:
				if len(at.Value) >= 8 {
					x.seed, x.hasSeed = binary.NativeEndian.Uint64(at.Value), true
				}
			case tcaNetemLoss:
				models, err := nl.ParseRouteAttr(at.Value)
				if err != nil {
					return x, err
				}
				for _, lm := range models {
					if lm.Attr.Type == netemLossGE && len(lm.Value) >= 16 {
						v := func(i int) uint32 { return binary.NativeEndian.Uint32(lm.Value[4*i:]) }
						x.ge, x.hasGE = geModel{P: v(0), R: v(1), H: v(2), K1: v(3)}, true
					}
					if lm.Attr.Type == netemLossGI && len(lm.Value) >= 20 {
						v := func(i int) uint32 { return binary.NativeEndian.Uint32(lm.Value[4*i:]) }
						x.four, x.hasFour = linkspec.FourStateNetem{P13: v(0), P31: v(1), P32: v(2), P14: v(3), P23: v(4)}, true
					}
				}
			}
		}
	}
	return x, nil
}

// netemAttrs is the netem configuration for one direction: its one-way
// delay (RTT/2 for a profile without options), the rate in bytes per
// second, the limit, and a loss term only when the direction has loss, so
// a loss-free profile produces exactly the qdisc it did before loss
// existed.
func netemAttrs(d Direction) netlink.NetemQdiscAttrs {
	a := netlink.NetemQdiscAttrs{
		Latency: uint32(math.Round(float64(d.Delay) / 1e3)), // microseconds; NewNetem converts to ticks
		Jitter:  uint32(math.Round(float64(d.Jitter) / 1e3)),
		Limit:   uint32(d.Limit),
		Rate64:  uint64(math.Round(d.RateMbit * 1e6 / 8)), // bytes per second
	}
	if d.LossPct > 0 {
		a.Loss = float32(d.LossPct)
		a.LossCorr = float32(d.LossCorr)
	}
	// The options below are zero for a profile that does not name them,
	// and the library then writes nothing for them.
	if d.Jitter > 0 {
		a.DelayCorr = float32(d.JitterCorr)
	}
	if d.DupPct > 0 {
		a.Duplicate, a.DuplicateCorr = float32(d.DupPct), float32(d.DupCorr)
	}
	if d.ReorderPct > 0 {
		a.ReorderProb, a.ReorderCorr, a.Gap = float32(d.ReorderPct), float32(d.ReorderCorr), uint32(max(d.ReorderGap, 1))
	}
	if d.CorruptPct > 0 {
		a.CorruptProb, a.CorruptCorr = float32(d.CorruptPct), float32(d.CorruptCorr)
	}
	return a
}

// rootNetem is the netem qdisc at the root of a direction's end: with a
// queue discipline the rate is tbf's, and netem holds the delay line only.
func rootNetem(attrs netlink.QdiscAttrs, d Direction) *netlink.Netem {
	na := netemAttrs(d)
	if d.Queue.Managed() {
		na.Rate64, na.Limit = 0, uint32(d.HeldLimit())
	}
	return netlink.NewNetem(attrs, na)
}

// describeNetem renders a netem qdisc as read back from the kernel in tc's
// words and order ("netem limit 110 delay 40ms loss 1% rate 10Mbit"). The
// kernel reports latency in scheduler ticks and loss as a fraction of
// 2^32; both are converted back.
func describeNetem(n *netlink.Netem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "netem limit %d", n.Limit)
	us := float64(n.Latency) / netlink.TickInUsec()
	fmt.Fprintf(&b, " delay %s", fmtMicros(us))
	pct := func(v uint32) string {
		return strconv.FormatFloat(float64(v)/math.MaxUint32*100, 'g', 6, 64) + "%"
	}
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

// fmtMicros prints a duration given in microseconds as tc does: "40ms",
// "40.5ms", "500us".
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

// netemNoSeed ends an applied line whose netem reported no PRNG seed.
const netemNoSeed = "(no seed: this kernel's netem has no TCA_NETEM_PRNG_SEED, added in Linux 6.6, so its random draws cannot be repeated)"

// netemSeed is one netem qdisc's PRNG seed as read back; ok is false when
// the kernel reported none.
type netemSeed struct {
	seed uint64
	ok   bool
}

// readBackNetem reads the root netem on link (through h, in ns) back from
// the kernel and describes it in tc's words, with its loss model and the
// distribution sent; it fails when the kernel holds a loss model other
// than d's.
func readBackNetem(ns *Namespace, h *netlink.Handle, link netlink.Link, d Direction) (string, netemExtras, error) {
	q, err := rootQdisc(h, link)
	if err != nil {
		return "", netemExtras{}, err
	}
	n, ok := q.(*netlink.Netem)
	if !ok {
		return "", netemExtras{}, fmt.Errorf("the root qdisc reads back as %q, not netem", q.Type())
	}
	line := describeNetem(n)
	x, err := readNetemExtras(ns, link.Attrs().Index)
	if err != nil {
		return "", x, fmt.Errorf("reading back netem's loss model and seed: %w", err)
	}
	if x.hasGE {
		line += " " + x.ge.String()
	}
	if x.hasFour {
		line += " " + fourStateString(x.four)
	}
	if x.hasGE != d.HasGE {
		return "", x, fmt.Errorf("netem reads back %q; the profile asked for Gilbert-Elliott loss: %v", line, d.HasGE)
	}
	if x.hasFour != d.HasFourState {
		return "", x, fmt.Errorf("netem reads back %q; the profile asked for 4-state loss: %v", line, d.HasFourState)
	}
	if d.JitterDist != "" {
		line += " distribution " + d.JitterDist + " (as sent; netem does not report its table)"
	}
	return line, x, nil
}
