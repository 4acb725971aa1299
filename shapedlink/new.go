package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// New builds the link for p: namespaces, veths, addresses, offloads,
// counters and the shaping, or for BackendInProcess the two in-process
// ends. Off Linux only BackendInProcess works; the others return an error
// wrapping errors.ErrUnsupported. On error nothing New created is left.
func New(ctx context.Context, p Profile, opts Options) (*Link, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch opts.Backend {
	case BackendAuto, BackendNetem, BackendEmulator, BackendNone, BackendInProcess:
	default:
		return nil, fmt.Errorf("shapedlink: unknown backend %q; use %q, %q, %q (unshaped, a baseline), %q (in this process, datagrams only) or leave it empty to choose automatically",
			opts.Backend, BackendNetem, BackendEmulator, BackendNone, BackendInProcess)
	}
	if opts.PacketTrace != nil && opts.Backend != BackendInProcess {
		return nil, fmt.Errorf("shapedlink: Options.PacketTrace is for the %q backend, which carries the packets itself; with %q leave it nil (the namespace backends' packets are the kernel's)",
			BackendInProcess, opts.Backend)
	}
	switch {
	case opts.Offload != OffloadWire && opts.Offload != OffloadKeep:
		return nil, fmt.Errorf("shapedlink: unknown offload mode %q; use %q (wire-sized packets, the default) or %q (the kernel's offloads kept)", opts.Offload, "", OffloadKeep)
	case opts.Offload == OffloadKeep && opts.Backend == BackendInProcess:
		return nil, fmt.Errorf("shapedlink: Options.Offload %q is for links with devices; the %q backend carries whole datagrams and has none, so leave it empty", OffloadKeep, BackendInProcess)
	}
	if w := opts.EmulatorDepartureWindow; w < 0 || w > MaxDepartureWindow {
		return nil, fmt.Errorf("shapedlink: Options.EmulatorDepartureWindow is %v; give 0 (every segment at its due time) up to %v", w, MaxDepartureWindow)
	}
	if opts.EmulatorDepartureWindow != 0 && opts.Backend != BackendEmulator && opts.Backend != BackendAuto {
		return nil, fmt.Errorf("shapedlink: Options.EmulatorDepartureWindow batches the %q backend's departures; the %q backend has none to batch, so leave it 0 or use %q", BackendEmulator, opts.Backend, BackendEmulator)
	}
	if opts.EmulatorKeepAwake && opts.Backend != BackendEmulator && opts.Backend != BackendAuto {
		return nil, fmt.Errorf("shapedlink: Options.EmulatorKeepAwake keeps the CPUs awake for the %q backend's timers; the %q backend has none, so leave it false or use %q", BackendEmulator, opts.Backend, BackendEmulator)
	}
	if opts.Backend == BackendInProcess && (len(p.Direction(Down).Cross) > 0 || len(p.Direction(Up).Cross) > 0) {
		return nil, fmt.Errorf("shapedlink: profile %s asks for cross traffic, which the %q backend cannot carry (its ends have datagrams only); use the namespace backends (netem or the emulator)", p, BackendInProcess)
	}
	if opts.EmulatorKeepAwakeAuto {
		switch {
		case opts.EmulatorKeepAwake:
			return nil, errors.New("shapedlink: Options.EmulatorKeepAwake and EmulatorKeepAwakeAuto are both set: give one (on, or decided by probing the host)")
		case opts.Backend != BackendEmulator && opts.Backend != BackendAuto:
			return nil, fmt.Errorf("shapedlink: Options.EmulatorKeepAwakeAuto decides keep-awake for the %q backend's timers; the %q backend has none, so leave it false or use %q", BackendEmulator, opts.Backend, BackendEmulator)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var l *Link
	var err error
	if opts.Backend == BackendInProcess {
		l, err = newInProcess(p, opts, log)
	} else {
		l, err = newWithNamespaces(ctx, p, opts, log)
	}
	if err != nil {
		return nil, err
	}
	for _, a := range l.shaper.applied() {
		log.Info("shapedlink: shaping applied", "backend", l.backend, "link", a)
	}
	for _, o := range l.offload {
		log.Debug("shapedlink: offload read back", "end", o.String())
	}
	return l, nil
}
