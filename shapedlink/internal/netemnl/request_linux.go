package netemnl

import (
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Qdisc is one qdisc as the kernel dumps it: its kind, place and
// TCA_OPTIONS.
type Qdisc struct {
	Kind           string
	Handle, Parent uint32
	Options        []byte
}

// QdiscRequest is an RTM_NEWQDISC with flags (plus NLM_F_ACK) for a qdisc
// of kind, with handle, parent and TCA_OPTIONS opts, on ifindex.
// NLM_F_CREATE|NLM_F_EXCL adds one; 0 changes the existing one in place
// (tc qdisc change), keeping its queue.
func QdiscRequest(flags, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, flags|unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: handle, Parent: parent})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated(kind)))
	req.AddData(opts)
	return req
}

// DumpRequest is an RTM_GETQDISC dump of the qdiscs on ifindex; its
// answers (RTM_NEWQDISC) go to ParseDump.
func DumpRequest(ifindex int) *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_GETQDISC, unix.NLM_F_DUMP)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex)})
	return req
}

// ParseDump reads the qdiscs of ifindex from a dump's messages.
func ParseDump(msgs [][]byte, ifindex int) ([]Qdisc, error) {
	var out []Qdisc
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
			return nil, err
		}
		q := Qdisc{Handle: tcm.Handle, Parent: tcm.Parent}
		for _, at := range attrs {
			switch at.Attr.Type {
			case nl.TCA_KIND:
				q.Kind = string(at.Value[:max(0, len(at.Value)-1)])
			case nl.TCA_OPTIONS:
				q.Options = at.Value
			}
		}
		out = append(out, q)
	}
	return out, nil
}
