package shapedlink

import (
	"context"
	"fmt"
	"log/slog"
)

// newWithNamespaces builds a link whose ends are network namespaces:
// netem's, the emulator's or none's (New has checked p and the backend).
func newWithNamespaces(ctx context.Context, p Profile, opts Options, log *slog.Logger) (*Link, error) {
	mode, err := resolveMode(opts.Mode)
	if err != nil {
		return nil, err
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
	if err := l.startCross(ctx); err != nil {
		return nil, err
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
	if l.backend != BackendEmulator && (opts.EmulatorKeepAwake || opts.EmulatorDepartureWindow != 0) {
		l.log.Info("shapedlink: the emulator's settings are not used: the automatic choice was not the emulator",
			"backend", l.backend, "keep_awake", opts.EmulatorKeepAwake, "departure_window", opts.EmulatorDepartureWindow)
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
		var es *emuShaper
		es, err = startEmulator(ctx, l.shaperNS, l.dirs, opts, l.offloadMode, l.udpSegOff)
		if err == nil {
			l.shaper = es
			if es.awake != nil {
				l.log.Info("shapedlink: CPUs kept awake", "cpus", es.awake.CPUs(), "policy", "SCHED_IDLE", "pid", es.awake.PID())
			}
		}
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
