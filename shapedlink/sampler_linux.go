package shapedlink

import (
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
)

// NewQdiscSampler samples the root qdisc of device dev in ns: backlog in
// packets and bytes and its drop counter. It works on any qdisc that keeps
// statistics (netem, tbf, bfifo, htb...).
func NewQdiscSampler(ns *Namespace, dev string) (*Sampler, error) {
	return newQdiscSampler(ns, dev, 0)
}

// newQdiscSampler samples the qdisc with the given handle on dev, or the
// root qdisc when handle is 0.
func newQdiscSampler(ns *Namespace, dev string, handle uint32) (*Sampler, error) {
	h, err := ns.handle()
	if err != nil {
		return nil, err
	}
	link, err := h.LinkByName(dev)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("shapedlink: sampler: finding %s in the %s namespace: %w", dev, ns.role, err)
	}
	idx := link.Attrs().Index
	poll := func(q *QueueSample) error {
		qs, err := h.QdiscList(link)
		q.At = time.Now()
		if err != nil {
			return fmt.Errorf("shapedlink: sampler: listing qdiscs on %s: %w", dev, err)
		}
		for _, qd := range qs {
			a := qd.Attrs()
			if a.LinkIndex != idx || handle == 0 && a.Parent != netlink.HANDLE_ROOT || handle != 0 && a.Handle != handle {
				continue
			}
			if a.Statistics == nil || a.Statistics.Queue == nil {
				return fmt.Errorf("shapedlink: sampler: the qdisc %s (%s) on %s reports no queue statistics", netlink.HandleStr(a.Handle), qd.Type(), dev)
			}
			q.Packets = int(a.Statistics.Queue.Qlen)
			q.Bytes = int(a.Statistics.Queue.Backlog)
			q.Drops = uint64(a.Statistics.Queue.Drops)
			return nil
		}
		if handle != 0 {
			return fmt.Errorf("shapedlink: sampler: %s has no qdisc %s", dev, netlink.HandleStr(handle))
		}
		return errors.New("shapedlink: sampler: " + dev + " has no root qdisc")
	}
	return &Sampler{poll: poll, close: h.Close}, nil
}
