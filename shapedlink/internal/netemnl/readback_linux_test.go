package netemnl

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// dumped is the message a dump answers with for a qdisc as QdiscRequest
// writes it: the request without its netlink header.
func dumped(ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) []byte {
	return QdiscRequest(unix.NLM_F_CREATE, ifindex, handle, parent, kind, opts).Serialize()[unix.SizeofNlMsghdr:]
}

// TestQdiscRequest: the request carries the flags asked for and an ACK,
// the tcmsg, the kind zero-terminated and the options as built.
func TestQdiscRequest(t *testing.T) {
	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110}
	opts, err := Options(Root(rootAttrs(), d), d, 0)
	if err != nil {
		t.Fatal(err)
	}
	req := QdiscRequest(unix.NLM_F_CREATE|unix.NLM_F_EXCL, 2, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts)
	if req.Type != unix.RTM_NEWQDISC || req.Flags != unix.NLM_F_REQUEST|unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK {
		t.Errorf("type %d flags %#x", req.Type, req.Flags)
	}
	if req := QdiscRequest(0, 2, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts); req.Flags != unix.NLM_F_REQUEST|unix.NLM_F_ACK {
		t.Errorf("a change's flags %#x, want request and ack only", req.Flags)
	}
	b := req.Serialize()
	tcm := nl.DeserializeTcMsg(b[unix.SizeofNlMsghdr:])
	if tcm.Ifindex != 2 || tcm.Handle != netlink.MakeHandle(1, 0) || tcm.Parent != netlink.HANDLE_ROOT {
		t.Errorf("tcmsg %+v", tcm)
	}
	if !bytes.Contains(b, append([]byte{10, 0, nl.TCA_KIND, 0}, "netem\x00"...)) || !bytes.HasSuffix(b, opts.Serialize()) {
		t.Errorf("request %x does not hold TCA_KIND netem and the options", b)
	}
}

// TestReadBack: what Options writes, dumped back (ParseDump), gives the
// loss model and seed (ExtrasOf) and the line ReadBack makes; a loss
// model other than the direction's is an error.
func TestReadBack(t *testing.T) {
	for _, c := range encodedCases[:4] {
		q := Root(rootAttrs(), c.d)
		opts, err := Options(q, c.d, c.seed)
		if err != nil {
			t.Fatal(err)
		}
		msgs := [][]byte{
			dumped(3, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts), // another device
			dumped(2, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts),
			{1, 2}, // shorter than a tcmsg
		}
		qs, err := ParseDump(msgs, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) != 1 || qs[0].Kind != "netem" || qs[0].Handle != netlink.MakeHandle(1, 0) || qs[0].Parent != netlink.HANDLE_ROOT || !bytes.Equal(qs[0].Options, opts.Serialize()[4:]) {
			t.Fatalf("%s: ParseDump = %+v", c.name, qs)
		}
		x, err := ExtrasOf(qs)
		if err != nil {
			t.Fatal(err)
		}
		if x.HasGE != c.d.HasGE || x.HasGE && x.GE != encodeGE(c.d.GE) || x.HasFourState != c.d.HasFourState || x.HasFourState && x.FourState != c.d.FourState.Netem() || x.HasSeed != (c.seed != 0) || x.Seed != c.seed {
			t.Errorf("%s: extras %+v", c.name, x)
		}
		line, err := ReadBack(q, x, c.d)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := describe(q)
		switch {
		case c.d.HasGE:
			want += " loss gemodel p 1% r 30% 1-h 100% 1-k 0.5%"
		case c.d.HasFourState:
			want += " loss state p13 1% p31 30% p32 10% p23 40% p14 0.5%"
		}
		if c.d.JitterDist != "" {
			want += " distribution " + c.d.JitterDist + " (as sent; netem does not report its table)"
		}
		if line != want {
			t.Errorf("%s: read back as %q, want %q", c.name, line, want)
		}
		other := c.d
		other.HasGE, other.HasFourState = !c.d.HasGE, false
		if _, err := ReadBack(q, x, other); err == nil || !strings.Contains(err.Error(), "Gilbert-Elliott") {
			t.Errorf("%s: read back against a direction with another loss model: %v", c.name, err)
		}
	}
	if _, err := ExtrasOf([]Qdisc{{Kind: "netem", Parent: netlink.HANDLE_ROOT, Options: make([]byte, 23)}}); err == nil {
		t.Error("ExtrasOf took netem options shorter than tc_netem_qopt")
	}
}

// kernelTbf is msg, tbf's dump as sent, with the bucket in tc_tbf_qopt
// as the kernel reports it: TCA_TBF_BURST's bytes at the rate, in 64 ns
// scheduler ticks, where what was sent is netlink.Xmittime's, truncated.
func kernelTbf(msg []byte, d linkspec.Direction) []byte {
	rate := uint64(math.Round(d.RateMbit * 1e6 / 8))
	ns := uint64(tbfBurst(rate)) * 1e9 / rate
	// tcmsg, TCA_KIND "tbf\0", TCA_OPTIONS' and TCA_TBF_PARMS' headers, then the buffer's offset.
	off := nl.SizeofTcMsg + 8 + 4 + 4 + 28
	binary.NativeEndian.PutUint32(msg[off:], uint32(ns/64))
	return msg
}

// TestDescribeChain: tbf and the discipline, as ChainOptions writes them,
// read back in tc's words; CoDel times the kernel reports truncated read
// to the nearest 10 us; a missing or other qdisc is an error.
func TestDescribeChain(t *testing.T) {
	q := linkspec.Queue{Kind: linkspec.FQCoDel, Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond, Flows: 1024, Quantum: 1514, ECN: true}
	for _, c := range []struct {
		d    linkspec.Direction
		want string
	}{
		{linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 10240, Queue: q},
			" | tbf rate 10Mbit burst 3028b | fq_codel limit 10240 flows 1024 quantum 1514 target 5ms interval 100ms ecn"},
		{linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 40000, Limit: 1000, Queue: linkspec.Queue{Kind: linkspec.CoDel, Target: 2 * time.Millisecond, Interval: 40 * time.Millisecond}},
			// A tick (64 ns) is 320 bytes at 40 Gbit/s.
			" | tbf rate 40Gbit burst 2499840b | codel limit 1000 target 2ms interval 40ms"},
	} {
		tbf, disc, err := ChainOptions(c.d)
		if err != nil {
			t.Fatal(err)
		}
		netem, err := Options(Root(rootAttrs(), c.d), c.d, 0)
		if err != nil {
			t.Fatal(err)
		}
		kind := c.d.Queue.Kind.String()
		qs, err := ParseDump([][]byte{
			dumped(2, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", netem),
			kernelTbf(dumped(2, TbfHandle, TbfParent, "tbf", tbf), c.d),
			dumped(2, QueueHandle, QueueParent, kind, disc),
		}, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DescribeChain(qs, c.d)
		if err != nil || got != c.want {
			t.Errorf("%s: DescribeChain = %q, %v; want %q", kind, got, err, c.want)
		}
		if _, err := DescribeChain(qs[:2], c.d); err == nil {
			t.Errorf("%s: no error without the discipline", kind)
		}
		if _, err := DescribeChain([]Qdisc{qs[0], qs[2]}, c.d); err == nil {
			t.Errorf("%s: no error without tbf", kind)
		}
	}
	trunc := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	trunc.AddRtAttr(tcaCodelLimit, nl.Uint32Attr(1000))
	trunc.AddRtAttr(tcaCodelTarget, nl.Uint32Attr(4999))
	trunc.AddRtAttr(tcaCodelInterval, nl.Uint32Attr(99999))
	d := linkspec.Direction{RateMbit: 10, Limit: 1000, Queue: linkspec.Queue{Kind: linkspec.CoDel}}
	tbf, _, err := ChainOptions(d)
	if err != nil {
		t.Fatal(err)
	}
	qs := []Qdisc{{Kind: "tbf", Handle: TbfHandle, Parent: TbfParent, Options: tbf.Serialize()[4:]}, {Kind: "codel", Handle: QueueHandle, Parent: QueueParent, Options: trunc.Serialize()[4:]}}
	if got, err := DescribeChain(qs, d); err != nil || !strings.HasSuffix(got, " | codel limit 1000 target 5ms interval 100ms") {
		t.Errorf("kernel's truncated times read as %q, %v", got, err)
	}
}
