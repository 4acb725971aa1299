package netemnl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
)

// The handles of a direction with a queue discipline:
//
//	netem 1: (root) -> tbf 2: (parent 1:1) -> codel|fq_codel 3: (parent 2:1)
var (
	TbfHandle   = netlink.MakeHandle(2, 0)
	QueueHandle = netlink.MakeHandle(3, 0)
	TbfParent   = netlink.MakeHandle(1, 1)
	QueueParent = netlink.MakeHandle(2, 1)
)

// Attribute numbers of pkt_sched.h for the chain.
const (
	tcaTbfParms  = 1 // TCA_TBF_PARMS: struct tc_tbf_qopt
	tcaTbfRate64 = 4 // TCA_TBF_RATE64
	tcaTbfBurst  = 6 // TCA_TBF_BURST: bytes

	// TCA_CODEL_* and TCA_FQ_CODEL_* share these four numbers.
	tcaCodelTarget   = 1 // us
	tcaCodelLimit    = 2 // packets
	tcaCodelInterval = 3 // us
	tcaCodelECN      = 4

	tcaFqCodelFlows   = 5 // TCA_FQ_CODEL_FLOWS (fq_codel only)
	tcaFqCodelQuantum = 6 // TCA_FQ_CODEL_QUANTUM, bytes
)

// tbfBurst is the token bucket's depth for a rate of bytesPerSec: two
// full frames, the least tbf takes without refusing full-size frames, or
// half a millisecond at the rate when that is more.
func tbfBurst(bytesPerSec uint64) uint32 {
	return uint32(max(2*1514, bytesPerSec/2000))
}

// ChainOptions is the TCA_OPTIONS of tbf (d's rate) and of d's queue
// discipline under it.
func ChainOptions(d linkspec.Direction) (tbf, disc *nl.RtAttr, err error) {
	rate := uint64(math.Round(d.RateMbit * 1e6 / 8))
	burst := tbfBurst(rate)
	// tc_tbf_qopt: rate and peakrate (struct tc_ratespec, 12 bytes each),
	// limit, buffer (ticks), mtu. The kernel prefers TCA_TBF_BURST, in
	// bytes, over the buffer.
	parms := make([]byte, 36)
	r32 := uint32(min(rate, math.MaxUint32))
	parms[1] = 1 // linklayer ethernet
	binary.NativeEndian.PutUint32(parms[8:], r32)
	binary.NativeEndian.PutUint32(parms[24:], 1<<20) // the default bfifo's bytes; the discipline replaces it
	binary.NativeEndian.PutUint32(parms[28:], netlink.Xmittime(rate, burst))
	tbf = nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	tbf.AddRtAttr(tcaTbfParms, parms)
	if rate > math.MaxUint32 {
		tbf.AddRtAttr(tcaTbfRate64, nl.Uint64Attr(rate))
	}
	tbf.AddRtAttr(tcaTbfBurst, nl.Uint32Attr(burst))

	q := d.Queue
	opts := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	us := func(t time.Duration) []byte { return nl.Uint32Attr(uint32(t / time.Microsecond)) }
	ecn := uint32(0)
	if q.ECN {
		ecn = 1
	}
	if !q.Managed() {
		return nil, nil, fmt.Errorf("no netem arrangement for queue discipline %v", q.Kind)
	}
	opts.AddRtAttr(tcaCodelLimit, nl.Uint32Attr(uint32(d.Limit)))
	if q.Target > 0 {
		opts.AddRtAttr(tcaCodelTarget, us(q.Target))
	}
	if q.Interval > 0 {
		opts.AddRtAttr(tcaCodelInterval, us(q.Interval))
	}
	// Always written: fq_codel marks by default, the link does not.
	opts.AddRtAttr(tcaCodelECN, nl.Uint32Attr(ecn))
	if q.Flows > 0 {
		opts.AddRtAttr(tcaFqCodelFlows, nl.Uint32Attr(uint32(q.Flows)))
	}
	if q.Quantum > 0 {
		opts.AddRtAttr(tcaFqCodelQuantum, nl.Uint32Attr(uint32(q.Quantum)))
	}
	return tbf, opts, nil
}

// DescribeChain finds the tbf and discipline under the root netem among
// qs (one device's qdiscs) and renders them in tc's words, each after
// " | ": " | tbf rate 10Mbit burst 3028b | fq_codel limit 10240 flows
// 1024 quantum 1514 target 5ms interval 100ms ecn". It fails unless both
// are there, in place, and of the kinds d asks for.
func DescribeChain(qs []Qdisc, d linkspec.Direction) (string, error) {
	var b strings.Builder
	var tbf, disc *Qdisc
	for i := range qs {
		switch {
		case qs[i].Handle == TbfHandle && qs[i].Parent == TbfParent:
			tbf = &qs[i]
		case qs[i].Handle == QueueHandle && qs[i].Parent == QueueParent:
			disc = &qs[i]
		}
	}
	if tbf == nil || tbf.Kind != "tbf" {
		return "", errors.New("no tbf under netem (handle 2:, parent 1:1)")
	}
	if disc == nil || disc.Kind != d.Queue.Kind.String() {
		return "", fmt.Errorf("no %v under tbf (handle 3:, parent 2:1)", d.Queue.Kind)
	}
	attrs, err := nl.ParseRouteAttr(tbf.Options)
	if err != nil {
		return "", fmt.Errorf("parsing tbf's options: %w", err)
	}
	var rate uint64
	var buffer uint32
	for _, at := range attrs {
		switch {
		case at.Attr.Type == tcaTbfParms && len(at.Value) >= 36:
			rate = uint64(binary.NativeEndian.Uint32(at.Value[8:]))
			buffer = binary.NativeEndian.Uint32(at.Value[28:])
		case at.Attr.Type == tcaTbfRate64 && len(at.Value) >= 8:
			rate = binary.NativeEndian.Uint64(at.Value)
		}
	}
	// The kernel reports the bucket in scheduler ticks.
	burst := math.Round(float64(rate) * float64(buffer) / netlink.TickInUsec() / 1e6)
	fmt.Fprintf(&b, " | tbf rate %s burst %.0fb", fmtBitRate(rate*8), burst)

	attrs, err = nl.ParseRouteAttr(disc.Options)
	if err != nil {
		return "", fmt.Errorf("parsing %s's options: %w", disc.Kind, err)
	}
	v := map[uint16]uint32{}
	for _, at := range attrs {
		if len(at.Value) >= 4 {
			v[at.Attr.Type] = binary.NativeEndian.Uint32(at.Value)
		}
	}
	fmt.Fprintf(&b, " | %s limit %d", disc.Kind, v[tcaCodelLimit])
	if disc.Kind == "fq_codel" {
		fmt.Fprintf(&b, " flows %d quantum %d", v[tcaFqCodelFlows], v[tcaFqCodelQuantum])
	}
	// The kernel keeps CoDel's times in units of 1.024 us and reports
	// them truncated (5 ms reads 4999 us); to the nearest 10 us they read
	// as written.
	tenUs := func(us uint32) string { return fmtMicros(math.Round(float64(us)/10) * 10) }
	fmt.Fprintf(&b, " target %s interval %s", tenUs(v[tcaCodelTarget]), tenUs(v[tcaCodelInterval]))
	if v[tcaCodelECN] != 0 {
		b.WriteString(" ecn")
	}
	return b.String(), nil
}
