package shapedlink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// netemShaper is the netem backend: one netem qdisc at the root of each
// veth end (over tbf and a queue discipline where the direction has one),
// and, with schedules, a goroutine that changes them in place.
type netemShaper struct {
	ends  ends
	dirs  [2]Direction
	lines []string
	// netemSeeds are the qdiscs' PRNG seeds as read back, down then up.
	netemSeeds []netemSeed
	sched      *netemSchedule // nil without schedules
}

// netemSeed is one netem qdisc's PRNG seed as read back; ok is false when
// the kernel reported none.
type netemSeed struct {
	seed uint64
	ok   bool
}

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

// startNetem puts netem (with tbf and the discipline under it for a
// queue discipline) at the root of each end, replacing what is there,
// reads everything back into the applied lines and starts the schedules.
// A seed other than zero seeds netem's PRNG where the kernel has one: seed
// down, backSeed(seed) up.
func startNetem(e ends, dirs [2]Direction, seed uint64, offload OffloadMode) (*netemShaper, error) {
	s := &netemShaper{ends: e, dirs: dirs}
	for _, end := range []End{ServerEnd, ClientEnd} {
		sd := seed
		if end == ClientEnd {
			sd = backSeed(seed)
		}
		line, err := s.apply(end, sd)
		if err != nil {
			return nil, err
		}
		dir := "server -> client"
		if end == ClientEnd {
			dir = "client -> server"
		}
		if offload == OffloadKeep {
			line += " | offload keep: netem judges a GSO super-packet as one packet (loss, duplication, reordering, corruption, the limit) and its rate counts it whole"
		}
		s.lines = append(s.lines, fmt.Sprintf("%s %s: %s", dir, e.dev[end], line))
	}
	sched, err := startNetemSchedule(e, dirs)
	if err != nil {
		return nil, err
	}
	s.sched = sched
	return s, nil
}

// apply builds end's qdiscs with seed and returns them read back, in tc's
// words.
func (s *netemShaper) apply(end End, seed uint64) (string, error) {
	ns, dev, d := s.ends.ns[end], s.ends.dev[end], s.dirs[end.dir()]
	h, err := ns.handle()
	if err != nil {
		return "", err
	}
	defer h.Close()
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
	if err := addNetemRaw(ns, netemnl.Root(attrs, d), d, seed); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return "", noNetem()
		}
		return "", fmt.Errorf("shapedlink: adding netem to %s: %w", dev, err)
	}
	if d.Queue.Managed() {
		if err := addQueueChain(ns, link.Attrs().Index, d); err != nil {
			return "", fmt.Errorf("shapedlink: %s: %w", dev, err)
		}
	}
	line, x, err := readBackNetem(ns, h, link, d)
	if err != nil {
		return "", fmt.Errorf("shapedlink: %s: %w", dev, err)
	}
	s.netemSeeds = append(s.netemSeeds, netemSeed{seed: x.Seed, ok: x.HasSeed})
	if x.HasSeed && seed != 0 && x.Seed != seed {
		return "", fmt.Errorf("shapedlink: %s's netem reads back seed %d; %d was sent", dev, x.Seed, seed)
	}
	if d.Random() {
		// Only a direction that draws anything has a stream to repeat (a
		// plain delay and rate draws nothing).
		if x.HasSeed {
			line += fmt.Sprintf(" seed %d", x.Seed)
		} else {
			line += " " + netemnl.NoSeed
		}
	}
	if d.Queue.Managed() {
		chain, err := describeQueueChain(ns, link.Attrs().Index, d)
		if err != nil {
			return "", fmt.Errorf("shapedlink: reading back %s's queue: %w", dev, err)
		}
		line += chain
	}
	return line, nil
}

func (s *netemShaper) applied() []string           { return s.lines }
func (s *netemShaper) stats() (ShaperReport, bool) { return ShaperReport{}, false }
func (s *netemShaper) pid() int                    { return 0 }

// sampler polls the end's root netem, or with a queue discipline the
// discipline under tbf, where the queue builds.
func (s *netemShaper) sampler(e End) (*Sampler, error) {
	if s.dirs[e.dir()].Queue.Managed() {
		return newQdiscSampler(s.ends.ns[e], s.ends.dev[e], netemnl.QueueHandle)
	}
	return NewQdiscSampler(s.ends.ns[e], s.ends.dev[e])
}

func (s *netemShaper) scheduleStart() time.Time {
	if s.sched == nil {
		return time.Time{}
	}
	return s.sched.start
}

func (s *netemShaper) appliedChanges() ([]AppliedChange, error) {
	if s.sched == nil {
		return nil, nil
	}
	return s.sched.record()
}

func (s *netemShaper) err() error {
	if s.sched == nil {
		return nil
	}
	if _, err := s.sched.record(); err != nil {
		return fmt.Errorf("%w; the link no longer follows its schedule, so any run in progress is invalid", err)
	}
	return nil
}

func (s *netemShaper) close() error {
	if s.sched != nil {
		s.sched.close()
	}
	return nil
}

// seeds says how netem's random draws were seeded, as the kernel reported
// it (HostState.NetemPRNG).
func (s *netemShaper) record(hs *HostState) {
	if len(s.netemSeeds) == 0 {
		return
	}
	var seeds []string
	for _, sd := range s.netemSeeds {
		if !sd.ok {
			hs.NetemPRNG = "not seedable: this kernel's netem has no TCA_NETEM_PRNG_SEED (Linux 6.6 and later), so its loss, jitter and other draws cannot be repeated"
			return
		}
		seeds = append(seeds, strconv.FormatUint(sd.seed, 10))
	}
	hs.NetemPRNG = "seeds " + strings.Join(seeds, " ")
}
