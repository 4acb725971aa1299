package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/internal/proc"
	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/emulator"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// A re-executed binary becomes the emulator's shaper here, before main.
func init() { emulator.MaybeServe() }

// emuShaper is the emulator backend: a shaper process in a namespace of
// its own between the two ends, forwarding frames between shaperSideSrv
// and shaperSideCli with the model (package emulator).
type emuShaper struct {
	mon   *emulator.Monitor
	awake *emulator.Awake // the keep-awake process, or nil
	probe *WakeProbe      // the probe that decided keep-awake, or nil
	dirs  [2]Direction    // as configured, seeds drawn
	lines []string
}

// errEmulatorExited reports a shaper process that is gone while its link
// is still open.
var errEmulatorExited = errors.New("shapedlink: the emulator's shaper process has exited; the link no longer forwards, so any run in progress is invalid")

// startEmulator starts the shaper for dirs (seeded with opts.Seed, the
// other direction backSeed of it; zero draws them) in the shaper
// namespace, with opts' Emulator settings, and waits until it forwards;
// with EmulatorKeepAwake (or EmulatorKeepAwakeAuto deciding it on, by the
// process's probe, taken before the shaper starts), then the keep-awake
// process, until its loops spin. On error it leaves neither process running.
func startEmulator(ctx context.Context, shaperNS *Namespace, dirs [2]Direction, opts Options, offload OffloadMode, udpSegOff bool) (*emuShaper, error) {
	var probe *WakeProbe
	if opts.EmulatorKeepAwakeAuto {
		p, err := ProbeWake()
		if err != nil {
			return nil, err
		}
		probe, opts.EmulatorKeepAwake = &p, p.KeepAwake
		if opts.Logger != nil {
			opts.Logger.Info("shapedlink: keep-awake decided by probing timer wake-ups", "keep_awake", p.KeepAwake,
				"p99_ms", p.P99Ms, "max_ms", p.MaxMs, "limit_p99_ms", p.LimitP99Ms, "limit_max_ms", p.LimitMaxMs)
		}
	}
	dirs[Down].Seed, dirs[Up].Seed = opts.Seed, backSeed(opts.Seed)
	cfg := emulator.Config{IfA: shaperSideSrv, IfB: shaperSideCli, AToB: dirs[Down], BToA: dirs[Up], KeepOffload: offload == OffloadKeep,
		LateMarker: opts.EmulatorLateMarker, DepartureWindow: opts.EmulatorDepartureWindow}
	cmd, mon, err := emulator.Command(cfg)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: preparing the emulator: %w", err)
	}
	if err := shaperNS.startDirect(cmd); err != nil {
		mon.Stop()
		return nil, fmt.Errorf("shapedlink: starting the emulator in the shaper namespace: %w", err)
	}
	s := &emuShaper{mon: mon, probe: probe}
	if err := mon.Ready(ctx); err != nil {
		mon.Stop()
		return nil, fmt.Errorf("shapedlink: the emulator did not start: %w", err)
	}
	cfg = mon.Config()
	s.dirs = [2]Direction{cfg.AToB, cfg.BToA}
	d := mon.Describe()
	// The shaper's socket buffers as granted (read back once it is ready):
	// unprivileged they fall back to the host's limits.
	st := mon.Snapshot()
	mode := ""
	if cfg.KeepOffload {
		mode = " offload keep (each wire segment of a super-packet judged on its own; the segmentation offloads it cannot cut, of tunnels, GSO partial, SCTP, ESP and fraglist, off at the ends"
		if udpSegOff {
			mode += "; UDP segmentation offload off at the ends: before Linux 6.2 a packet socket cannot read a UDP GSO super-packet"
		}
		mode += ")"
	}
	if cfg.DepartureWindow > 0 {
		mode += fmt.Sprintf(" departure window %v (segments due within it of a due one leave with it)", cfg.DepartureWindow)
	}
	s.lines = []string{
		fmt.Sprintf("server %s -> client: %s%s (shaper rcvbuf %d sndbuf %d)", serverDev, d[0], mode, st[0].RcvBufBytes, st[0].SndBufBytes),
		fmt.Sprintf("client %s -> server: %s%s (shaper rcvbuf %d sndbuf %d)", clientDev, d[1], mode, st[1].RcvBufBytes, st[1].SndBufBytes),
	}
	if opts.EmulatorKeepAwake {
		if err := s.startAwake(ctx); err != nil {
			mon.Stop()
			return nil, err
		}
	}
	return s, nil
}

// keepAwakeStarted, when set (by tests), runs once the keep-awake process
// is ready; its error fails startEmulator.
var keepAwakeStarted func() error

// startAwake starts the keep-awake process, from the thread that started
// the shaper (so with the same CPU affinity), and waits until it spins.
// On error it is gone.
func (s *emuShaper) startAwake(ctx context.Context) error {
	cmd, a, err := emulator.AwakeCommand()
	if err != nil {
		return fmt.Errorf("shapedlink: preparing the keep-awake process: %w", err)
	}
	if err := proc.Start(cmd); err != nil {
		a.Stop()
		return fmt.Errorf("shapedlink: starting the keep-awake process: %w", err)
	}
	if err := a.Ready(ctx); err != nil {
		a.Stop()
		return fmt.Errorf("shapedlink: keeping the CPUs awake: %w", err)
	}
	if keepAwakeStarted != nil {
		if err := keepAwakeStarted(); err != nil {
			a.Stop()
			return err
		}
	}
	s.awake = a
	return nil
}

func (s *emuShaper) applied() []string { return s.lines }

func (s *emuShaper) stats() (ShaperReport, bool) {
	snap := s.mon.Snapshot()
	r := ShaperReport{Priority: s.mon.Priority()}
	for i, name := range []string{"server->client", "client->server"} {
		r.Directions = append(r.Directions, newShaperStats(name, snap[i]))
	}
	if cycles, pause, ok := s.mon.GC(); ok {
		r.GC = &ShaperGC{Cycles: cycles, PauseMaxMs: float64(pause) / float64(time.Millisecond)}
	}
	if s.awake != nil {
		r.KeepAwakeCPUs = s.awake.CPUs()
	}
	r.DepartureWindowMs = float64(s.mon.Config().DepartureWindow) / float64(time.Millisecond)
	return r, true
}

func (s *emuShaper) sampler(e End) (*Sampler, error) {
	dir := int(e.dir()) // AToB is server to client, Down
	mon := s.mon
	fq := s.dirs[e.dir()].Queue.Kind == linkspec.FQCoDel
	var flows []aqm.FlowBacklog
	return &Sampler{poll: func(q *QueueSample) error {
		select {
		case <-mon.Exited():
			return errEmulatorExited
		default:
		}
		// The shaper publishes its counters word by word; read until two
		// snapshots agree on the gauges so a sample is rarely caught
		// between them (a torn pair would show a wrong bytes-per-packet
		// figure to gsocheck).
		st := mon.Snapshot()[dir]
		for range 8 {
			again := mon.Snapshot()[dir]
			if again.Packets == st.Packets && again.Bytes == st.Bytes {
				break
			}
			st = again
		}
		q.At = time.Now()
		q.Packets = int(st.Packets)
		q.Bytes = int(st.Bytes)
		q.Drops = st.Drops()
		q.LossDrops = st.LossDrops
		q.LimitDrops = st.LimitDrops
		if fq {
			// A torn read (the shaper publishing throughout) leaves
			// this sample without flows rather than wrong ones.
			var ok bool
			if flows, ok = mon.Flows(dir, flows); ok && len(flows) > 0 {
				q.Flows = make([]FlowSample, len(flows))
				for i, f := range flows {
					q.Flows[i] = FlowSample{Queue: f.Index, Packets: f.Packets, Bytes: int(f.Bytes)}
				}
			}
		}
		return nil
	}}, nil
}

// scheduleStart is the emulator's time zero, just before it became
// ready, when a direction has a schedule or a trace.
func (s *emuShaper) scheduleStart() time.Time {
	for _, d := range s.dirs {
		if d.Schedule != "" || d.Trace != "" {
			return s.mon.ScheduleBase()
		}
	}
	return time.Time{}
}

// appliedChanges: the emulator applies each change at its time exactly,
// to the frames' arrival stamps.
func (s *emuShaper) appliedChanges() ([]AppliedChange, error) {
	start := s.scheduleStart()
	if start.IsZero() {
		return nil, nil
	}
	return scheduledChanges(s.dirs, start, start, time.Now()), nil
}

func (s *emuShaper) record(hs *HostState) {
	seeds := s.mon.Seeds()
	hs.EmulatorSeeds = seeds[:]
	if s.awake != nil {
		hs.EmulatorKeepAwakeCPUs = s.awake.CPUs()
	}
	hs.EmulatorWakeProbe = s.probe
}

func (s *emuShaper) pid() int { return s.mon.PID() }

func (s *emuShaper) err() error {
	select {
	case <-s.mon.Exited():
		return errEmulatorExited
	default:
		return nil
	}
}

func (s *emuShaper) close() error {
	err := s.mon.Stop()
	if s.awake != nil {
		s.awake.Stop()
	}
	if err != nil {
		return fmt.Errorf("shapedlink: stopping the emulator: %w", err)
	}
	return nil
}
