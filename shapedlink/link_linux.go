package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/emulator"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Fixed sizes and device names of every link (the addresses are in
// link.go); they never collide, each link having namespaces of its own.
const (
	prefixLen = 24
	linkMTU   = 1500

	serverDev      = "qbsrv0"  // in the server namespace
	clientDev      = "qbcli0"  // in the client namespace
	shaperSideSrv  = "qbshs0"  // in the shaper namespace, peer of serverDev
	shaperSideCli  = "qbshc0"  // in the shaper namespace, peer of clientDev
	wirePacketSize = 1500 + 14 // the longest frame one wire packet makes on a veth
)

// valid says why e is neither ServerEnd nor ClientEnd, or nil.
func (e End) valid() error {
	if e != ServerEnd && e != ClientEnd {
		return fmt.Errorf("shapedlink: %v is not an end; use ServerEnd or ClientEnd", e)
	}
	return nil
}

// A re-executed binary becomes the emulator's shaper here, before main.
func init() { emulator.MaybeServe() }

// Link is a shaped link between a server and a client namespace. Build it
// with New and release it with Close.
type Link struct {
	profile Profile
	backend Backend
	mode    Mode
	log     *slog.Logger

	server, client, shaper *Namespace

	netemAvailable bool
	applied        []string
	offload        []Offload
	counters       [2]*nftCounters // egress counters per End

	emu *emulator.Monitor
	// netemSeeds are the netem qdiscs' PRNG seeds as read back, server
	// end then client end.
	netemSeeds []netemSeed
	// netemSched applies the profile's schedules to netem (nil without).
	netemSched *netemSchedule
	// tv is the profile's schedules and traces, read once.
	tv timeVarying

	closeMu sync.Mutex
	closed  bool
}

// New builds the link for p: the namespaces, the veth pair (and, for the
// emulator, the shaper namespace and process between them), addresses,
// wire-sized offload settings, egress counters and the shaping. It logs the
// backend chosen and one line per end describing the shaping as applied.
//
// On error nothing New created is left behind.
func New(ctx context.Context, p Profile, opts Options) (*Link, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return build(ctx, p, opts)
}

func build(ctx context.Context, p Profile, opts Options) (*Link, error) {
	switch opts.Backend {
	case BackendAuto, BackendNetem, BackendEmulator, BackendNone:
	default:
		return nil, fmt.Errorf("shapedlink: unknown backend %q; use %q, %q, %q (unshaped, a baseline) or leave it empty to choose automatically", opts.Backend, BackendNetem, BackendEmulator, BackendNone)
	}
	mode, err := resolveMode(opts.Mode)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler) // a library speaks only when asked
	}
	tv, err := loadTimeVarying(p)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: %w", err)
	}
	l := &Link{profile: p, tv: tv, mode: mode, log: log}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()

	if l.server, err = newNamespace("server"); err != nil {
		return nil, err
	}
	if l.client, err = newNamespace("client"); err != nil {
		return nil, err
	}
	for _, ns := range []*Namespace{l.server, l.client} {
		if err := prepareNamespace(ns); err != nil {
			return nil, err
		}
	}

	l.netemAvailable, err = probeNetem(l.server)
	if err != nil {
		return nil, err
	}
	emuOnly := p.emulatorOnlyWith(l.tv)
	switch opts.Backend {
	case BackendAuto:
		l.backend = BackendEmulator
		reason := "this kernel has no sch_netem (adding a netem qdisc returned ENOENT)"
		switch {
		case emuOnly != "":
			reason = emuOnly
		case l.netemAvailable:
			l.backend = BackendNetem
			reason = "this kernel has sch_netem"
		}
		log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", reason, "mode", mode)
	case BackendNetem:
		if emuOnly != "" {
			return nil, fmt.Errorf("shapedlink: profile %q cannot be built with netem: %s; use the emulator backend (or leave the backend empty to choose it)", p, emuOnly)
		}
		if !l.netemAvailable {
			return nil, noNetem()
		}
		l.backend = BackendNetem
		log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", "requested by the caller", "mode", mode)
	default:
		l.backend = opts.Backend
		log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", "requested by the caller", "netem_available", l.netemAvailable, "mode", mode)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if err := l.buildTopology(); err != nil {
		return nil, err
	}
	for _, end := range []End{ServerEnd, ClientEnd} {
		c, err := newNftCounters(l.ns(end), l.dev(end))
		if err != nil {
			return nil, err
		}
		l.counters[end] = c
	}

	switch l.backend {
	case BackendNetem:
		if err = l.applyNetem(opts.Seed, backSeed(opts.Seed)); err == nil {
			err = l.startNetemSchedule()
		}
	case BackendEmulator:
		err = l.startEmulator(ctx, opts.Seed)
	case BackendNone:
		l.applied = []string{"server " + serverDev + ": unshaped", "client " + clientDev + ": unshaped"}
	}
	if err != nil {
		return nil, err
	}
	for _, a := range l.applied {
		log.Info("shapedlink: shaping applied", "backend", l.backend, "link", a)
	}
	for _, o := range l.offload {
		log.Debug("shapedlink: offload read back", "end", o.String())
	}
	ok = true
	return l, nil
}

// prepareNamespace brings loopback up and turns IPv6 off for every device
// created later, so router solicitations and duplicate address detection
// never share a queue with the experiment's packets.
func prepareNamespace(ns *Namespace) error {
	h, err := ns.handle()
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("shapedlink: finding lo in the %s namespace: %w", ns.role, err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("shapedlink: bringing lo up in the %s namespace: %w", ns.role, err)
	}
	return ns.Do(func() error {
		for _, k := range []string{"net/ipv6/conf/default/disable_ipv6", "net/ipv6/conf/all/disable_ipv6"} {
			if err := writeSysctl(k, "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("shapedlink: disabling IPv6 in the %s namespace (%s): %w", ns.role, k, err)
			}
		}
		return nil
	})
}

// buildTopology creates the veth pair(s), sets addresses, MTU and offloads,
// and brings everything up.
func (l *Link) buildTopology() error {
	hs, err := l.server.handle()
	if err != nil {
		return err
	}
	defer hs.Close()
	hc, err := l.client.handle()
	if err != nil {
		return err
	}
	defer hc.Close()

	type dev struct {
		ns   *Namespace
		h    *netlink.Handle
		name string
		addr netip.Addr
	}
	devs := []dev{{l.server, hs, serverDev, serverAddr}, {l.client, hc, clientDev, clientAddr}}

	if l.backend == BackendEmulator {
		if l.shaper, err = newNamespace("shaper"); err != nil {
			return err
		}
		if err := prepareNamespace(l.shaper); err != nil {
			return err
		}
		hh, err := l.shaper.handle()
		if err != nil {
			return err
		}
		defer hh.Close()
		if err := addVeth(hs, l.server, serverDev, l.shaper, shaperSideSrv); err != nil {
			return err
		}
		if err := addVeth(hc, l.client, clientDev, l.shaper, shaperSideCli); err != nil {
			return err
		}
		devs = append(devs, dev{l.shaper, hh, shaperSideSrv, netip.Addr{}}, dev{l.shaper, hh, shaperSideCli, netip.Addr{}})
	} else if err := addVeth(hs, l.server, serverDev, l.client, clientDev); err != nil {
		return err
	}

	for _, d := range devs {
		link, err := d.h.LinkByName(d.name)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s in the %s namespace: %w", d.name, d.ns.role, err)
		}
		if err := d.h.LinkSetMTU(link, linkMTU); err != nil {
			return fmt.Errorf("shapedlink: setting MTU %d on %s: %w", linkMTU, d.name, err)
		}
		off, err := pinWireSized(d.ns, d.h, d.name)
		if err != nil {
			return err
		}
		l.offload = append(l.offload, off)
		if d.addr.IsValid() {
			a := &netlink.Addr{IPNet: &net.IPNet{IP: d.addr.AsSlice(), Mask: net.CIDRMask(prefixLen, 32)}}
			if err := d.h.AddrAdd(link, a); err != nil {
				return fmt.Errorf("shapedlink: adding %s/%d to %s: %w", d.addr, prefixLen, d.name, err)
			}
		}
		if err := d.h.LinkSetUp(link); err != nil {
			return fmt.Errorf("shapedlink: bringing %s up: %w", d.name, err)
		}
	}
	// Permanent neighbour entries: no ARP ever crosses the link, so no
	// first packet waits for resolution, no lost ARP stalls a lossy run
	// for a second, and queues and counters hold only the experiment's
	// packets.
	macs := make([]net.HardwareAddr, 2)
	for i, d := range devs[:2] {
		link, err := d.h.LinkByName(d.name)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s: %w", d.name, err)
		}
		macs[i] = link.Attrs().HardwareAddr
	}
	for i, d := range devs[:2] {
		peer := devs[1-i]
		link, err := d.h.LinkByName(d.name)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s: %w", d.name, err)
		}
		n := &netlink.Neigh{LinkIndex: link.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
			IP: peer.addr.AsSlice(), HardwareAddr: macs[1-i]}
		if err := d.h.NeighSet(n); err != nil {
			return fmt.Errorf("shapedlink: adding the neighbour entry %s -> %s on %s: %w", peer.addr, macs[1-i], d.name, err)
		}
	}
	// A device that was just brought up transmits through the noop qdisc,
	// which drops everything, until the kernel's link watcher activates it
	// a moment later; wait for that so the first packet is not lost.
	for _, d := range devs {
		if err := waitActive(d.h, d.name); err != nil {
			return err
		}
	}
	return nil
}

// waitActive waits (up to two seconds) until dev is operationally up and
// its root qdisc is no longer the noop placeholder.
func waitActive(h *netlink.Handle, dev string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		link, err := h.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s: %w", dev, err)
		}
		if link.Attrs().OperState == netlink.OperUp {
			if q, err := rootQdisc(h, link); err == nil && q.Type() != "noop" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shapedlink: %s did not become operational within 2s (operstate %s)", dev, link.Attrs().OperState)
		}
		time.Sleep(time.Millisecond)
	}
}

// addVeth creates a veth pair with one end, name, in ns (through h, a
// handle in ns) and the other, peer, directly in peerNS: nothing ever
// appears in the caller's own namespace.
func addVeth(h *netlink.Handle, ns *Namespace, name string, peerNS *Namespace, peer string) error {
	fd, err := peerNS.dupFd()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	v := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: name, MTU: linkMTU},
		PeerName:      peer,
		PeerMTU:       linkMTU,
		PeerNamespace: netlink.NsFd(fd),
	}
	if err := h.LinkAdd(v); err != nil {
		return fmt.Errorf("shapedlink: creating veth %s (%s namespace) <-> %s (%s namespace): %w", name, ns.role, peer, peerNS.role, err)
	}
	return nil
}

func (l *Link) ns(e End) *Namespace {
	if e == ClientEnd {
		return l.client
	}
	return l.server
}

func (l *Link) dev(e End) string {
	if e == ClientEnd {
		return clientDev
	}
	return serverDev
}

// configure puts direction d's schedule and trace into ed.
func (tv timeVarying) configure(d Dir, ed *emulator.Direction) {
	if t := tv.trace[d]; t != nil {
		ed.TraceMs, ed.RateBitsPerSec = t.Ms, 0
	}
	if s := tv.sched[d]; s != nil {
		ed.SchedulePeriod = s.Period
		for _, c := range s.Changes {
			ed.Schedule = append(ed.Schedule, emulator.Change{At: c.At, Set: c.Set, Value: c.Value, Hold: c.Hold})
		}
	}
}

// backSeed is the client-to-server direction's seed for a link seeded
// with seed: zero (random) for zero, else a fixed, distinct value
// (splitmix64's increment), so the two directions' draws are independent.
func backSeed(seed uint64) uint64 {
	if seed == 0 {
		return 0
	}
	if b := seed + 0x9e3779b97f4a7c15; b != 0 {
		return b
	}
	return 1
}

func (l *Link) startEmulator(ctx context.Context, seed uint64) error {
	cfg := emulatorConfig(l.profile, l.tv, seed)
	cmd, mon, err := emulator.Command(cfg)
	if err != nil {
		return fmt.Errorf("shapedlink: preparing the emulator: %w", err)
	}
	if err := l.shaper.startDirect(cmd); err != nil {
		mon.Stop()
		return fmt.Errorf("shapedlink: starting the emulator in the shaper namespace: %w", err)
	}
	l.emu = mon
	if err := mon.Ready(ctx); err != nil {
		return fmt.Errorf("shapedlink: the emulator did not start: %w", err)
	}
	d := mon.Describe()
	// The shaper's socket buffers as granted (read back once it is ready):
	// unprivileged they fall back to the host's limits.
	st := mon.Snapshot()
	l.applied = []string{
		fmt.Sprintf("server %s -> client: %s (shaper rcvbuf %d sndbuf %d)", serverDev, d[0], st[0].RcvBufBytes, st[0].SndBufBytes),
		fmt.Sprintf("client %s -> server: %s (shaper rcvbuf %d sndbuf %d)", clientDev, d[1], st[1].RcvBufBytes, st[1].SndBufBytes),
	}
	return nil
}

// emulatorConfig is the emulator's configuration for p with its
// schedules and traces tv, seeded with seed (the other direction with
// backSeed(seed)).
func emulatorConfig(p Profile, tv timeVarying, seed uint64) emulator.Config {
	dir := func(d Dir, seed uint64) emulator.Direction {
		pd := p.Direction(d)
		ed := emulator.Direction{
			Delay:          pd.Delay,
			Jitter:         pd.Jitter,
			RateBitsPerSec: uint64(pd.RateMbit*1e6 + 0.5),
			Limit:          pd.Limit,
			LossPct:        pd.LossPct,
			Seed:           seed,
			JitterDist:     pd.JitterDist,
			JitterCorr:     pd.JitterCorr,
			LossCorr:       pd.LossCorr,
			DupPct:         pd.DupPct,
			DupCorr:        pd.DupCorr,
			ReorderPct:     pd.ReorderPct,
			ReorderCorr:    pd.ReorderCorr,
			ReorderGap:     pd.ReorderGap,
		}
		if q := pd.Queue; q.Kind != "" {
			kind, _ := aqm.ParseKind(q.Kind)
			ed.Queue = &aqm.Config{Kind: kind, Limit: pd.Limit, Target: q.Target, Interval: q.Interval, Flows: q.Flows, Quantum: q.Quantum, ECN: q.ECN}
			// The emulator's own limit counts the delay line too: room
			// for the discipline's limit and for what the delay line
			// holds at the rate (DefaultLimit of the direction's rate and
			// twice its delay, 1.5 times that in 1500-byte frames).
			ed.Limit = pd.Limit + DefaultLimit(pd.RateMbit, 2*pd.Delay)
		}
		if pd.HasGE {
			ed.GE = &emulator.GE{P: pd.GE.P, R: pd.GE.R, OneMinusH: pd.GE.OneMinusH, OneMinusK: pd.GE.OneMinusK}
		}
		return ed
	}
	cfg := emulator.Config{IfA: shaperSideSrv, IfB: shaperSideCli, AToB: dir(Down, seed), BToA: dir(Up, backSeed(seed))}
	for _, x := range []struct {
		d  Dir
		ed *emulator.Direction
	}{{Down, &cfg.AToB}, {Up, &cfg.BToA}} {
		tv.configure(x.d, x.ed)
	}
	return cfg
}

// Close stops the emulator (if any), removes the filters and drops the
// namespaces, which destroys the veth pairs and nftables tables in them.
// Sockets still open in a namespace keep that namespace (but not the link's
// shaping) alive until they close. Close returns once the kernel's worker
// has finished tearing the namespaces down (waiting at most 0.5 s), so
// that a link built and measured next does not share the CPUs with that
// work. Close is idempotent.
func (l *Link) Close() error {
	l.closeMu.Lock()
	if l.closed {
		l.closeMu.Unlock()
		return nil
	}
	l.closed = true
	l.closeMu.Unlock()
	var errs []error
	if l.netemSched != nil {
		l.netemSched.close()
	}
	if l.emu != nil {
		if err := l.emu.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("shapedlink: stopping the emulator: %w", err))
		}
	}
	for _, ns := range []*Namespace{l.server, l.client, l.shaper} {
		if ns == nil {
			continue
		}
		// Remove the link explicitly so it disappears now even if a
		// socket keeps the namespace itself alive.
		if h, err := ns.handle(); err == nil {
			for _, name := range []string{serverDev, clientDev, shaperSideSrv, shaperSideCli} {
				if link, err := h.LinkByName(name); err == nil {
					_ = h.LinkDel(link)
				}
			}
			h.Close()
		}
		if err := ns.close(); err != nil {
			errs = append(errs, err)
		}
	}
	// The kernel finishes the teardown in a worker of its own; whatever
	// is measured next must not run beside it (teardown_linux.go).
	awaitNetnsTeardown()
	return errors.Join(errs...)
}

// ScheduleStart is the time from which the link's schedules and traces
// count (the emulator's time zero, just before it became ready); the zero
// Time when the link has neither.
func (l *Link) ScheduleStart() time.Time {
	if l.netemSched != nil {
		return l.netemSched.start
	}
	if l.emu == nil {
		return time.Time{}
	}
	for _, d := range []Dir{Down, Up} {
		if pd := l.profile.Direction(d); pd.Schedule != "" || pd.Trace != "" {
			return l.emu.ScheduleBase()
		}
	}
	return time.Time{}
}

// AppliedChanges lists the schedule's changes that have taken effect so
// far, in time order: for the emulator each at its time exactly; for netem
// as applied, with when the kernel acknowledged each. The error is why a
// netem schedule stopped, if it did.
func (l *Link) AppliedChanges() ([]AppliedChange, error) {
	if l.netemSched != nil {
		return l.netemSched.record()
	}
	start := l.ScheduleStart()
	if start.IsZero() {
		return nil, nil
	}
	return l.tv.changes(start, start, time.Now()), nil
}

// Server is the server's namespace.
func (l *Link) Server() *Namespace { return l.server }

// Client is the client's namespace.
func (l *Link) Client() *Namespace { return l.client }

// ServerAddr is the server end's IPv4 address (198.18.0.1).
func (l *Link) ServerAddr() netip.Addr { return serverAddr }

// ClientAddr is the client end's IPv4 address (198.18.0.2).
func (l *Link) ClientAddr() netip.Addr { return clientAddr }

// Profile is the profile the link was built for.
func (l *Link) Profile() Profile { return l.profile }

// Backend is the backend in use (never BackendAuto).
func (l *Link) Backend() Backend { return l.backend }

// Mode is the privilege mode the link was built in (never ModeAuto).
func (l *Link) Mode() Mode { return l.mode }

// Device is the name of the veth device at end e, inside e's namespace.
func (l *Link) Device(e End) string { return l.dev(e) }

// Namespace is the namespace of end e.
func (l *Link) Namespace(e End) *Namespace { return l.ns(e) }

// Applied describes the shaping in force, one tc-like line per end: for
// netem read back from the kernel's qdisc dump, for the emulator from the
// emulator's own configuration (seeds included).
func (l *Link) Applied() []string { return append([]string(nil), l.applied...) }

// Offload is the offload settings read back from every veth end after New
// set them (two ends for netem, four for the emulator).
func (l *Link) Offload() []Offload { return append([]Offload(nil), l.offload...) }

// errEmulatorExited reports a shaper process that is gone while its link
// is still open.
var errEmulatorExited = errors.New("shapedlink: the emulator's shaper process has exited; the link no longer forwards, so any run in progress is invalid")

// Err reports whether the link is still intact: nil, or why not (for the
// emulator, a shaper process that has exited). Check it after a run so a
// run over a broken link is never reported as a result.
func (l *Link) Err() error {
	l.closeMu.Lock()
	closed := l.closed
	l.closeMu.Unlock()
	if closed {
		return errors.New("shapedlink: the link was closed")
	}
	if l.emu != nil {
		select {
		case <-l.emu.Exited():
			return errEmulatorExited
		default:
		}
	}
	if l.netemSched != nil {
		if _, err := l.netemSched.record(); err != nil {
			return fmt.Errorf("%w; the link no longer follows its schedule, so any run in progress is invalid", err)
		}
	}
	return nil
}

// EmulatorPID is the shaper process's id, or 0 when the backend is not
// the emulator.
func (l *Link) EmulatorPID() int {
	if l.emu == nil {
		return 0
	}
	return l.emu.PID()
}

// ShaperStats returns the emulator's counters and priority, and false when
// the backend is not the emulator (netem's counters are in the sampler's
// QueueSample). Counters run from the shaper's start, so they cover link
// setup and warm-up as well as the measured part of a run.
func (l *Link) ShaperStats() (ShaperReport, bool) {
	if l.emu == nil {
		return ShaperReport{}, false
	}
	snap := l.emu.Snapshot()
	r := ShaperReport{Priority: l.emu.Priority()}
	for i, name := range []string{"server->client", "client->server"} {
		s := snap[i]
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		r.Directions = append(r.Directions, ShaperStats{
			Direction: name, Received: s.Received, Forwarded: s.Forwarded, ForwardedBytes: s.ForwardedBytes,
			LossDrops: s.LossDrops, LimitDrops: s.LimitDrops, SocketDrops: s.SocketDrops,
			SendErrors: s.SendErrors, OversizeDrops: s.OversizeDrops,
			Duplicates: s.Duplicates, Reordered: s.Reordered,
			QueueDrops: s.QueueDrops, CoDelDrops: s.CoDelDrops, ECNMarks: s.ECNMarks,
			BlackoutDrops: s.BlackoutDrops, Changes: s.Changes, MaxChangeLagMs: float64(s.MaxChangeLagNanos) / 1e6,
			Unstamped: s.Received - min(s.Stamped, s.Received),
			// A bucket's upper edge can lie above the largest lateness
			// seen; the maximum is then the tighter bound.
			LateP50Ms:   ms(min(s.LateQuantile(0.5), time.Duration(s.MaxLateNanos))),
			LateP99Ms:   ms(min(s.LateQuantile(0.99), time.Duration(s.MaxLateNanos))),
			LateMaxMs:   ms(time.Duration(s.MaxLateNanos)),
			RcvBufBytes: s.RcvBufBytes, SndBufBytes: s.SndBufBytes,
		})
	}
	return r, true
}
