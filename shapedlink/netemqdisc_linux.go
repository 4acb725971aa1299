package shapedlink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// With the netem backend a direction with a queue discipline is built as
// a chain at the sending end's egress:
//
//	netem 1: (delay, loss; no rate)
//	  tbf 2: (the rate, parent 1:1)
//	    codel or fq_codel 3: (parent 2:1)
//
// netem's own rate would queue frames inside netem's time queue, where no
// child qdisc can manage them; with the rate in tbf the standing queue
// builds in tbf's child, the discipline, as it does at a real bottleneck.
// The delay line is ahead of the queue here and behind it in the
// emulator: for a fixed delay the two orders deliver every frame at the
// same time, but jittered frames would overtake each other before the
// queue, so netem does not build jitter beside a discipline (the
// emulator and the in-process link do; linkspec.NotOnNetem).
var (
	tbfHandle   = netlink.MakeHandle(2, 0)
	queueHandle = netlink.MakeHandle(3, 0)
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
// full frames, or half a millisecond at the rate when that is more (at
// high rates the kernel's timer could not release frames one by one).
// netem's own rate has no burst at all; two frames is the least tbf
// accepts without refusing full-size frames.
func tbfBurst(bytesPerSec uint64) uint32 {
	return uint32(max(2*1514, bytesPerSec/2000))
}

// addQueueChain adds tbf and the discipline under the root netem on
// ifindex in ns, for d (d.Queue.Kind is codel or fq_codel).
func addQueueChain(ns *Namespace, ifindex int, d Direction) error {
	tbf, opts, err := queueChainOptions(d)
	if err != nil {
		return err
	}
	if err := addQdiscRaw(ns, ifindex, tbfHandle, netlink.MakeHandle(1, 1), "tbf", tbf); err != nil {
		return fmt.Errorf("adding tbf (the rate) under netem: %w", missingQdisc("tbf", err))
	}
	if err := addQdiscRaw(ns, ifindex, queueHandle, netlink.MakeHandle(2, 1), d.Queue.Kind.String(), opts); err != nil {
		return fmt.Errorf("adding %s under tbf: %w", d.Queue.Kind, missingQdisc(d.Queue.Kind.String(), err))
	}
	return nil
}

// queueChainOptions is the TCA_OPTIONS of tbf (the rate) and of the
// discipline under it, for d.
func queueChainOptions(d Direction) (tbf, disc *nl.RtAttr, err error) {
	rate := uint64(math.Round(d.RateMbit * 1e6 / 8))
	burst := tbfBurst(rate)
	// tc_tbf_qopt: rate and peakrate (struct tc_ratespec, 12 bytes each),
	// limit, buffer (ticks), mtu. The burst in bytes goes in
	// TCA_TBF_BURST, which the kernel prefers over the buffer.
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
	// codel and fq_codel number limit, target, interval and ecn alike.
	opts.AddRtAttr(tcaCodelLimit, nl.Uint32Attr(uint32(d.Limit)))
	if q.Target > 0 {
		opts.AddRtAttr(tcaCodelTarget, us(q.Target))
	}
	if q.Interval > 0 {
		opts.AddRtAttr(tcaCodelInterval, us(q.Interval))
	}
	// fq_codel marks by default in the kernel; the link's default is
	// off, so the choice is always written.
	opts.AddRtAttr(tcaCodelECN, nl.Uint32Attr(ecn))
	if q.Flows > 0 {
		opts.AddRtAttr(tcaFqCodelFlows, nl.Uint32Attr(uint32(q.Flows)))
	}
	if q.Quantum > 0 {
		opts.AddRtAttr(tcaFqCodelQuantum, nl.Uint32Attr(uint32(q.Quantum)))
	}
	return tbf, opts, nil
}

// missingQdisc says what ENOENT from adding a qdisc of kind means: the
// kernel has no such qdisc (the module is not loaded and could not be).
func missingQdisc(kind string, err error) error {
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("this kernel has no %s qdisc (%w): load it with modprobe sch_%s, or use the emulator backend", kind, err, kind)
	}
	return err
}

// addQdiscRaw adds a qdisc of kind with the given handle and parent and
// TCA_OPTIONS opts to ifindex in ns.
func addQdiscRaw(ns *Namespace, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return sendQdisc(ns, unix.NLM_F_CREATE|unix.NLM_F_EXCL, ifindex, handle, parent, kind, opts)
}

// changeQdiscRaw changes the existing qdisc with that handle in place (tc
// qdisc change): its queue is kept.
func changeQdiscRaw(ns *Namespace, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return sendQdisc(ns, 0, ifindex, handle, parent, kind, opts)
}

// sendQdisc sends one RTM_NEWQDISC with flags (plus NLM_F_ACK) and waits
// for the kernel's answer.
func sendQdisc(ns *Namespace, flags, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return ns.Do(func() error {
		req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, flags|unix.NLM_F_ACK)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: handle, Parent: parent})
		req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated(kind)))
		req.AddData(opts)
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
}

// rawQdisc is one qdisc as the kernel dumps it: its kind, place and
// TCA_OPTIONS.
type rawQdisc struct {
	kind           string
	handle, parent uint32
	options        []byte
}

// dumpQdiscs lists the qdiscs on ifindex in ns.
func dumpQdiscs(ns *Namespace, ifindex int) ([]rawQdisc, error) {
	var out []rawQdisc
	err := ns.Do(func() error {
		req := nl.NewNetlinkRequest(unix.RTM_GETQDISC, unix.NLM_F_DUMP)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex)})
		msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWQDISC)
		if err != nil {
			return err
		}
		for _, msg := range msgs {
			if len(msg) < nl.SizeofTcMsg {
				continue
			}
			tcm := nl.DeserializeTcMsg(msg)
			if int(tcm.Ifindex) != ifindex {
				continue
			}
			attrs, err := nl.ParseRouteAttr(msg[nl.SizeofTcMsg:])
			if err != nil {
				return err
			}
			q := rawQdisc{handle: tcm.Handle, parent: tcm.Parent}
			for _, at := range attrs {
				switch at.Attr.Type {
				case nl.TCA_KIND:
					q.kind = string(at.Value[:max(0, len(at.Value)-1)])
				case nl.TCA_OPTIONS:
					q.options = at.Value
				}
			}
			out = append(out, q)
		}
		return nil
	})
	return out, err
}

// describeQueueChain reads back the tbf and discipline under the root
// netem on ifindex and renders them in tc's words, each after " | ":
// " | tbf rate 10Mbit burst 3028b | fq_codel limit 10240 flows 1024
// quantum 1514 target 5ms interval 100ms ecn". It fails unless both are
// there, in place, and of the kinds d asks for.
func describeQueueChain(ns *Namespace, ifindex int, d Direction) (string, error) {
	qs, err := dumpQdiscs(ns, ifindex)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var tbf, disc *rawQdisc
	for i := range qs {
		switch {
		case qs[i].handle == tbfHandle && qs[i].parent == netlink.MakeHandle(1, 1):
			tbf = &qs[i]
		case qs[i].handle == queueHandle && qs[i].parent == netlink.MakeHandle(2, 1):
			disc = &qs[i]
		}
	}
	if tbf == nil || tbf.kind != "tbf" {
		return "", errors.New("no tbf under netem (handle 2:, parent 1:1)")
	}
	if disc == nil || disc.kind != d.Queue.Kind.String() {
		return "", fmt.Errorf("no %v under tbf (handle 3:, parent 2:1)", d.Queue.Kind)
	}
	attrs, err := nl.ParseRouteAttr(tbf.options)
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

	attrs, err = nl.ParseRouteAttr(disc.options)
	if err != nil {
		return "", fmt.Errorf("parsing %s's options: %w", disc.kind, err)
	}
	v := map[uint16]uint32{}
	for _, at := range attrs {
		if len(at.Value) >= 4 {
			v[at.Attr.Type] = binary.NativeEndian.Uint32(at.Value)
		}
	}
	// codel and fq_codel number target, limit, interval and ecn alike.
	fmt.Fprintf(&b, " | %s limit %d", disc.kind, v[tcaCodelLimit])
	if disc.kind == "fq_codel" {
		fmt.Fprintf(&b, " flows %d quantum %d", v[tcaFqCodelFlows], v[tcaFqCodelQuantum])
	}
	// The kernel keeps CoDel's times in units of 1.024 us and reports
	// them truncated to whole microseconds (5 ms reads 4999 us); to the
	// nearest 10 us they read as they were written.
	tenUs := func(us uint32) string { return fmtMicros(math.Round(float64(us)/10) * 10) }
	fmt.Fprintf(&b, " target %s interval %s", tenUs(v[tcaCodelTarget]), tenUs(v[tcaCodelInterval]))
	if v[tcaCodelECN] != 0 {
		b.WriteString(" ecn")
	}
	return b.String(), nil
}
