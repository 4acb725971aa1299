package shapedlink

import (
	"errors"
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// addNetemRaw adds netem qdisc q (netemnl.Root) at the root of its link
// in ns, with d's options and seed (netemnl.Options).
func addNetemRaw(ns *Namespace, q *netlink.Netem, d Direction, seed uint64) error {
	options, err := netemnl.Options(q, d, seed)
	if err != nil {
		return err
	}
	a := q.Attrs()
	return addQdiscRaw(ns, a.LinkIndex, a.Handle, a.Parent, "netem", options)
}

// addQueueChain adds tbf and the discipline under the root netem on
// ifindex in ns, for d (d.Queue.Kind is codel or fq_codel).
func addQueueChain(ns *Namespace, ifindex int, d Direction) error {
	tbf, opts, err := netemnl.ChainOptions(d)
	if err != nil {
		return err
	}
	if err := addQdiscRaw(ns, ifindex, netemnl.TbfHandle, netemnl.TbfParent, "tbf", tbf); err != nil {
		return fmt.Errorf("adding tbf (the rate) under netem: %w", missingQdisc("tbf", err))
	}
	if err := addQdiscRaw(ns, ifindex, netemnl.QueueHandle, netemnl.QueueParent, d.Queue.Kind.String(), opts); err != nil {
		return fmt.Errorf("adding %s under tbf: %w", d.Queue.Kind, missingQdisc(d.Queue.Kind.String(), err))
	}
	return nil
}

// missingQdisc says what ENOENT from adding a qdisc of kind means.
func missingQdisc(kind string, err error) error {
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("this kernel has no %s qdisc (%w): load it with modprobe sch_%s, or use the emulator backend", kind, err, kind)
	}
	return err
}

// addQdiscRaw adds a qdisc of kind with handle, parent and TCA_OPTIONS
// opts to ifindex in ns.
func addQdiscRaw(ns *Namespace, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return sendQdisc(ns, unix.NLM_F_CREATE|unix.NLM_F_EXCL, ifindex, handle, parent, kind, opts)
}

// changeQdiscRaw changes the qdisc with that handle in place, keeping its
// queue.
func changeQdiscRaw(ns *Namespace, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return sendQdisc(ns, 0, ifindex, handle, parent, kind, opts)
}

func sendQdisc(ns *Namespace, flags, ifindex int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return ns.Do(func() error {
		_, err := netemnl.QdiscRequest(flags, ifindex, handle, parent, kind, opts).Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
}

// dumpQdiscs lists the qdiscs on ifindex in ns.
func dumpQdiscs(ns *Namespace, ifindex int) ([]netemnl.Qdisc, error) {
	var qs []netemnl.Qdisc
	err := ns.Do(func() error {
		msgs, err := netemnl.DumpRequest(ifindex).Execute(unix.NETLINK_ROUTE, unix.RTM_NEWQDISC)
		if err != nil {
			return err
		}
		qs, err = netemnl.ParseDump(msgs, ifindex)
		return err
	})
	return qs, err
}

// readBackNetem reads the root netem on link (through h, in ns) and its
// extras back from the kernel and describes them in tc's words
// (netemnl.ReadBack).
func readBackNetem(ns *Namespace, h *netlink.Handle, link netlink.Link, d Direction) (string, netemnl.Extras, error) {
	q, err := rootQdisc(h, link)
	if err != nil {
		return "", netemnl.Extras{}, err
	}
	n, ok := q.(*netlink.Netem)
	if !ok {
		return "", netemnl.Extras{}, fmt.Errorf("the root qdisc reads back as %q, not netem", q.Type())
	}
	qs, err := dumpQdiscs(ns, link.Attrs().Index)
	if err != nil {
		return "", netemnl.Extras{}, fmt.Errorf("reading back netem's loss model and seed: %w", err)
	}
	x, err := netemnl.ExtrasOf(qs)
	if err != nil {
		return "", x, fmt.Errorf("reading back netem's loss model and seed: %w", err)
	}
	line, err := netemnl.ReadBack(n, x, d)
	return line, x, err
}

// describeQueueChain reads back the tbf and discipline under the root
// netem on ifindex in ns (netemnl.DescribeChain).
func describeQueueChain(ns *Namespace, ifindex int, d Direction) (string, error) {
	qs, err := dumpQdiscs(ns, ifindex)
	if err != nil {
		return "", err
	}
	return netemnl.DescribeChain(qs, d)
}

// rootQdisc returns the root qdisc of link, as the kernel dumps it.
func rootQdisc(h *netlink.Handle, link netlink.Link) (netlink.Qdisc, error) {
	qs, err := h.QdiscList(link)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: listing qdiscs on %s: %w", link.Attrs().Name, err)
	}
	for _, q := range qs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT && q.Attrs().LinkIndex == link.Attrs().Index {
			return q, nil
		}
	}
	return nil, fmt.Errorf("shapedlink: %s has no root qdisc", link.Attrs().Name)
}
