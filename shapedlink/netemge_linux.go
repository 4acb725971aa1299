package shapedlink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
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
// (TCA_NETEM_LATENCY64, TCA_NETEM_JITTER64), its Gilbert-Elliott loss
// model (TCA_NETEM_LOSS), its jitter distribution table
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
	if seed != 0 {
		options.AddRtAttr(tcaNetemPRNGSeed, nl.Uint64Attr(seed))
	}
	return options, nil
}

// netemExtras is what readNetemExtras finds in a netem qdisc's dump
// beyond what the netlink library parses: its Gilbert-Elliott model and
// its PRNG seed (TCA_NETEM_PRNG_SEED, which kernels from 6.6 report for
// every netem, seeded by the caller or at random).
type netemExtras struct {
	ge      geModel
	hasGE   bool
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
				}
			}
		}
	}
	return x, nil
}
