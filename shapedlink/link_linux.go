package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
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

// Link is a shaped link between a server and a client namespace. Build it
// with New, make sockets and start programs in Server and Client, check
// Err after a run, and release it with Close. What a bench reads about
// the link while it runs (queue samples, counters, the host state) is
// grouped under Instruments, and what an experiment does to the path
// (blocking UDP, moving the client's address) under Control.
type Link struct {
	profile Profile
	dirs    [2]Direction // resolved, schedules and traces loaded once
	backend Backend
	mode    Mode
	// offloadMode is Options.Offload (OffloadWire or OffloadKeep).
	offloadMode OffloadMode
	// udpSegOff says the ends' UDP segmentation offload was turned off
	// because the shaper's packet sockets cannot carry it on this kernel
	// (see vnetCarriesUDPGSO).
	udpSegOff bool
	log       *slog.Logger

	server, client, shaperNS *Namespace

	shaper         shaper
	netemAvailable bool
	offload        []Offload
	counters       [2]*nftCounters // egress counters per End

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
	switch opts.Backend {
	case BackendAuto, BackendNetem, BackendEmulator, BackendNone:
	default:
		return nil, fmt.Errorf("shapedlink: unknown backend %q; use %q, %q, %q (unshaped, a baseline) or leave it empty to choose automatically", opts.Backend, BackendNetem, BackendEmulator, BackendNone)
	}
	mode, err := resolveMode(opts.Mode)
	if err != nil {
		return nil, err
	}
	if opts.Offload != OffloadWire && opts.Offload != OffloadKeep {
		return nil, fmt.Errorf("shapedlink: unknown offload mode %q; use %q (wire-sized packets, the default) or %q (the kernel's offloads kept)", opts.Offload, "", OffloadKeep)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler) // a library speaks only when asked
	}
	dirs, err := p.load()
	if err != nil {
		return nil, err
	}
	l := &Link{profile: p, dirs: dirs, mode: mode, log: log, offloadMode: opts.Offload}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()
	if err := l.build(ctx, opts); err != nil {
		return nil, err
	}
	for _, a := range l.shaper.applied() {
		log.Info("shapedlink: shaping applied", "backend", l.backend, "link", a)
	}
	for _, o := range l.offload {
		log.Debug("shapedlink: offload read back", "end", o.String())
	}
	ok = true
	return l, nil
}

// build makes the ends, chooses the backend, builds the topology it needs
// and starts its shaper.
func (l *Link) build(ctx context.Context, opts Options) error {
	var err error
	if l.server, err = newNamespace("server"); err != nil {
		return err
	}
	if l.client, err = newNamespace("client"); err != nil {
		return err
	}
	for _, ns := range []*Namespace{l.server, l.client} {
		if err := prepareNamespace(ns); err != nil {
			return err
		}
	}
	if l.netemAvailable, err = probeNetem(l.server); err != nil {
		return err
	}
	if err := l.chooseBackend(opts.Backend); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.buildTopology(l.backend == BackendEmulator); err != nil {
		return err
	}
	for _, end := range []End{ServerEnd, ClientEnd} {
		c, err := newNftCounters(l.ns(end), l.dev(end))
		if err != nil {
			return err
		}
		l.counters[end] = c
	}
	e := ends{ns: [2]*Namespace{l.server, l.client}, dev: [2]string{serverDev, clientDev}}
	switch l.backend {
	case BackendNetem:
		l.shaper, err = startNetem(e, l.dirs, opts.Seed, l.offloadMode)
	case BackendEmulator:
		l.shaper, err = startEmulator(ctx, l.shaperNS, l.dirs, opts.Seed, l.offloadMode, l.udpSegOff)
	default:
		l.shaper = unshaped{ends: e}
	}
	if err != nil {
		l.shaper = nil
	}
	return err
}

// chooseBackend settles l.backend for the asked one and says why.
func (l *Link) chooseBackend(asked Backend) error {
	notNetem := notOnNetem(l.dirs)
	switch asked {
	case BackendAuto:
		l.backend = BackendEmulator
		reason := "this kernel has no sch_netem (adding a netem qdisc returned ENOENT)"
		switch {
		case notNetem != "":
			reason = notNetem
		case l.netemAvailable:
			l.backend = BackendNetem
			reason = "this kernel has sch_netem"
		}
		l.log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", reason, "mode", l.mode)
	case BackendNetem:
		if notNetem != "" {
			return fmt.Errorf("shapedlink: profile %q cannot be built with netem: %s; use the emulator backend (or leave the backend empty to choose it)", l.profile, notNetem)
		}
		if !l.netemAvailable {
			return noNetem()
		}
		l.backend = BackendNetem
		l.log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", "requested by the caller", "mode", l.mode)
	default:
		l.backend = asked
		l.log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", "requested by the caller", "netem_available", l.netemAvailable, "mode", l.mode)
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

// Close stops the shaping, removes the filters and drops the namespaces,
// which destroys the veth pairs and nftables tables in them. Sockets
// still open in a namespace keep that namespace (but not the link's
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
	if l.shaper != nil {
		if err := l.shaper.close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ns := range []*Namespace{l.server, l.client, l.shaperNS} {
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

// Err reports whether the link is still intact: nil, or why not (the
// emulator's shaper process has exited, or netem stopped following its
// schedule). Check it after a run so a run over a broken link is never
// reported as a result.
func (l *Link) Err() error {
	l.closeMu.Lock()
	closed := l.closed
	l.closeMu.Unlock()
	if closed {
		return errors.New("shapedlink: the link was closed")
	}
	return l.shaper.err()
}

// Server is the server's namespace.
func (l *Link) Server() *Namespace { return l.server }

// Client is the client's namespace.
func (l *Link) Client() *Namespace { return l.client }

// Namespace is the namespace of end e.
func (l *Link) Namespace(e End) *Namespace { return l.ns(e) }

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

// Applied describes the shaping in force, one tc-like line per end: for
// netem read back from the kernel's qdisc dump, for the emulator from the
// emulator's own configuration (seeds included).
func (l *Link) Applied() []string { return append([]string(nil), l.shaper.applied()...) }
