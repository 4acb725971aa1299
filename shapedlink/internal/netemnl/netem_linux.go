package netemnl

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Attribute numbers of include/uapi/linux/pkt_sched.h that the netlink
// library does not name.
const (
	tcaNetemDelayDist = 2 // TCA_NETEM_DELAY_DIST: the table, s16 each
	tcaNetemLoss      = 5 // TCA_NETEM_LOSS, a nest of one loss model
	netemLossGE       = 2 // NETEM_LOSS_GE: struct tc_netem_gemodel {p, r, h, k1}
	netemLossGI       = 1 // NETEM_LOSS_GI: struct tc_netem_gimodel {p13, p31, p32, p14, p23}
	// TCA_NETEM_LATENCY64 and TCA_NETEM_JITTER64: s64 nanoseconds, Linux
	// 4.15 and later; they override tc_netem_qopt's 64 ns ticks.
	tcaNetemLatency64 = 10
	tcaNetemJitter64  = 11
	// TCA_NETEM_PRNG_SEED (u64), Linux 6.6 and later.
	tcaNetemPRNGSeed = 14
)

// netemAttrs is the netem configuration of direction d as the netlink
// library holds it: delay and jitter in microseconds, the rate in bytes
// per second, the limit, and a term for each random process d has.
func netemAttrs(d linkspec.Direction) netlink.NetemQdiscAttrs {
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

// Root is the netem qdisc at the root of d's sending end. With a queue
// discipline the rate is tbf's (ChainOptions), and netem holds the delay
// line only, with room for everything the chain holds.
func Root(attrs netlink.QdiscAttrs, d linkspec.Direction) *netlink.Netem {
	na := netemAttrs(d)
	if d.Queue.Managed() {
		na.Rate64, na.Limit = 0, uint32(d.HeldLimit())
	}
	return netlink.NewNetem(attrs, na)
}

// Options is netem's TCA_OPTIONS for q (made by Root from d): what the
// netlink library writes for q (tc_netem_qopt, correlations, reordering,
// corruption, the rate), then d's delay and jitter in nanoseconds, its
// loss model, its distribution table and, when seed is not zero, the PRNG
// seed. The jitter's correlation is taken from d, since the library drops
// it for a direction with no delay.
func Options(q *netlink.Netem, d linkspec.Direction, seed uint64) (*nl.RtAttr, error) {
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

// GEModel is struct tc_netem_gemodel: each a probability as a fraction of
// 2^32-1. H is the probability of no loss in the bad state (tc's "1-h"
// complemented), K1 the loss probability in the good state (tc's "1-k").
type GEModel struct{ P, R, H, K1 uint32 }

// netemProb encodes a percentage as netem's u32 probability, as tc's
// get_percent does (rounded fraction of 2^32-1).
func netemProb(pct float64) uint32 {
	return uint32(math.Round(pct / 100 * math.MaxUint32))
}

func encodeGE(g linkspec.GE) GEModel {
	return GEModel{P: netemProb(g.P), R: netemProb(g.R), H: math.MaxUint32 - netemProb(g.OneMinusH), K1: netemProb(g.OneMinusK)}
}

func (m GEModel) bytes() []byte {
	b := make([]byte, 16)
	for i, v := range []uint32{m.P, m.R, m.H, m.K1} {
		binary.NativeEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// String is the model in tc's words: "loss gemodel p 1% r 30% 1-h 100% 1-k 0%".
func (m GEModel) String() string {
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

// fourStateString is m in tc's words and order: "loss state p13 2% p31
// 30% p32 20% p23 40% p14 1%".
func fourStateString(m linkspec.FourStateNetem) string {
	return fmt.Sprintf("loss state p13 %s p31 %s p32 %s p23 %s p14 %s", pct(m.P13), pct(m.P31), pct(m.P32), pct(m.P23), pct(m.P14))
}

// pct prints a u32 probability as tc does: "1%", "0.5%".
func pct(v uint32) string {
	return strconv.FormatFloat(float64(v)/math.MaxUint32*100, 'g', 6, 64) + "%"
}
