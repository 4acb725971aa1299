package shapedlink

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// noNetem is ErrNoNetem with what to do about it.
func noNetem() error {
	return fmt.Errorf("%w (adding a netem qdisc returned ENOENT): use the emulator backend "+
		"(Options.Backend BackendEmulator, or empty to choose), or load the module with modprobe sch_netem where the kernel ships it", ErrNoNetem)
}

// probeNetem reports whether the kernel has sch_netem by adding a netem
// qdisc to the loopback device of ns, a scratch device in a namespace
// nobody else uses, and removing it again.
func probeNetem(ns *Namespace) (bool, error) {
	h, err := ns.handle()
	if err != nil {
		return false, err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return false, fmt.Errorf("shapedlink: finding lo in the %s namespace: %w", ns.role, err)
	}
	q := netlink.NewNetem(netlink.QdiscAttrs{
		LinkIndex: lo.Attrs().Index,
		Handle:    netlink.MakeHandle(0x7b, 0),
		Parent:    netlink.HANDLE_ROOT,
	}, netlink.NetemQdiscAttrs{})
	err = h.QdiscAdd(q)
	switch {
	case err == nil:
		if err := h.QdiscDel(q); err != nil {
			return true, fmt.Errorf("shapedlink: removing the probe netem qdisc from lo: %w", err)
		}
		return true, nil
	case errors.Is(err, unix.ENOENT):
		return false, nil
	}
	return false, fmt.Errorf("shapedlink: probing for sch_netem on lo in the %s namespace: %w", ns.role, err)
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
	return a
}

// rootNetem is the netem qdisc at the root of a direction's end: with a
// queue discipline the rate is tbf's, and netem holds the delay line only.
func rootNetem(attrs netlink.QdiscAttrs, d Direction) *netlink.Netem {
	na := netemAttrs(d)
	if d.Queue.Kind != "" {
		na.Rate64, na.Limit = 0, uint32(netemDelayLineLimit(d))
	}
	return netlink.NewNetem(attrs, na)
}

// applyNetem puts one netem qdisc at the root of each end, replacing
// whatever is there by delete and add (a change cannot clear an attribute),
// with tbf and the discipline under it for a direction with a queue
// discipline (netemqdisc_linux.go), then reads everything back to describe
// the link as applied. A seed other than zero seeds netem's PRNG where the
// kernel has one (the server-to-client direction gets seed, the other
// seedBack); the read-back says whether it took.
func (l *Link) applyNetem(seed, seedBack uint64) error {
	for _, end := range []End{ServerEnd, ClientEnd} {
		ns, dev := l.ns(end), l.dev(end)
		h, err := ns.handle()
		if err != nil {
			return err
		}
		line, err := func() (string, error) {
			link, err := h.LinkByName(dev)
			if err != nil {
				return "", fmt.Errorf("shapedlink: finding %s: %w", dev, err)
			}
			attrs := netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
			if old, err := rootQdisc(h, link); err == nil && old != nil && old.Attrs().Handle != 0 {
				if err := h.QdiscDel(old); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
					return "", fmt.Errorf("shapedlink: removing the old root qdisc (%s) from %s: %w", old.Type(), dev, err)
				}
			}
			d := l.profile.Direction(end.dir())
			qd := rootNetem(attrs, d)
			s := seed
			if end == ClientEnd {
				s = seedBack
			}
			// Built here rather than by the library, which cannot write
			// the delay in nanoseconds, a loss model, a distribution
			// table or a seed; see netemge_linux.go.
			if err := addNetemRaw(ns, qd, d, s); err != nil {
				if errors.Is(err, unix.ENOENT) {
					return "", noNetem()
				}
				return "", fmt.Errorf("shapedlink: adding netem to %s: %w", dev, err)
			}
			if d.Queue.Kind != "" {
				if err := addQueueChain(ns, link.Attrs().Index, d); err != nil {
					return "", fmt.Errorf("shapedlink: %s: %w", dev, err)
				}
			}
			q, err := rootQdisc(h, link)
			if err != nil {
				return "", err
			}
			n, ok := q.(*netlink.Netem)
			if !ok {
				return "", fmt.Errorf("shapedlink: %s's root qdisc reads back as %q, not netem", dev, q.Type())
			}
			line := describeNetem(n)
			x, err := readNetemExtras(ns, link.Attrs().Index)
			if err != nil {
				return "", fmt.Errorf("shapedlink: reading back %s's netem loss model and seed: %w", dev, err)
			}
			if x.hasGE {
				line += " " + x.ge.String()
			}
			if x.hasGE != d.HasGE {
				return "", fmt.Errorf("shapedlink: %s's netem reads back %q; the profile asked for Gilbert-Elliott loss: %v", dev, line, d.HasGE)
			}
			if d.JitterDist != "" {
				line += " distribution " + d.JitterDist + " (as sent; netem does not report its table)"
			}
			l.netemSeeds = append(l.netemSeeds, netemSeed{seed: x.seed, ok: x.hasSeed})
			if x.hasSeed && s != 0 && x.seed != s {
				return "", fmt.Errorf("shapedlink: %s's netem reads back seed %d; %d was sent", dev, x.seed, s)
			}
			if d.random() {
				// Only a direction that draws anything has a stream to
				// repeat (a plain delay and rate draws nothing).
				if x.hasSeed {
					line += fmt.Sprintf(" seed %d", x.seed)
				} else {
					line += " " + netemNoSeed
				}
			}
			if d.Queue.Kind != "" {
				chain, err := describeQueueChain(ns, link.Attrs().Index, d)
				if err != nil {
					return "", fmt.Errorf("shapedlink: reading back %s's queue: %w", dev, err)
				}
				line += chain
			}
			return line, nil
		}()
		h.Close()
		if err != nil {
			return err
		}
		dir := "server -> client"
		if end == ClientEnd {
			dir = "client -> server"
		}
		l.applied = append(l.applied, fmt.Sprintf("%s %s: %s", dir, dev, line))
	}
	return nil
}

// netemNoSeed ends an applied line whose netem reported no PRNG seed.
const netemNoSeed = "(no seed: this kernel's netem has no TCA_NETEM_PRNG_SEED, added in Linux 6.6, so its random draws cannot be repeated)"

// netemSeed is one netem qdisc's PRNG seed as read back; ok is false when
// the kernel reported none.
type netemSeed struct {
	seed uint64
	ok   bool
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

// netemPRNG is HostState.NetemPRNG for this link.
func (l *Link) netemPRNG() string {
	if len(l.netemSeeds) == 0 {
		return ""
	}
	var seeds []string
	for _, s := range l.netemSeeds {
		if !s.ok {
			return "not seedable: this kernel's netem has no TCA_NETEM_PRNG_SEED (Linux 6.6 and later), so its loss, jitter and other draws cannot be repeated"
		}
		seeds = append(seeds, strconv.FormatUint(s.seed, 10))
	}
	return "seeds " + strings.Join(seeds, " ")
}
