package shapedlink

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/inproc"
)

// inprocShaper is BackendInProcess's shaper.
type inprocShaper struct {
	link  *inproc.Link
	dirs  [2]Direction // as configured, seeds drawn
	lines []string
}

// newInProcess builds the in-process link for p (New has checked p and
// the backend).
func newInProcess(p Profile, opts Options, log *slog.Logger) (*Link, error) {
	if opts.Mode != ModeAuto && opts.Mode != ModeInProcess {
		return nil, fmt.Errorf("shapedlink: the %q backend needs no privilege, so mode %q means nothing to it; leave Options.Mode empty",
			BackendInProcess, opts.Mode)
	}
	dirs, err := p.load()
	if err != nil {
		return nil, err
	}
	dirs[Down].Seed, dirs[Up].Seed = opts.Seed, backSeed(opts.Seed)
	for _, d := range []Dir{Down, Up} {
		for dirs[d].Seed == 0 {
			var b [8]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, fmt.Errorf("shapedlink: drawing a seed for the in-process link: %w", err)
			}
			dirs[d].Seed = binary.LittleEndian.Uint64(b[:])
		}
	}
	cfg := inproc.Config{Dirs: dirs, Addrs: [2]netip.Addr{serverAddr, clientAddr}}
	if trace := opts.PacketTrace; trace != nil {
		cfg.Trace = func(e inproc.Event) { trace(packetEvent(e)) }
	}
	il, err := inproc.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: building the in-process link: %w", err)
	}
	s := &inprocShaper{link: il, dirs: dirs, lines: []string{
		"server -> client: inproc " + dirs[Down].Describe(),
		"client -> server: inproc " + dirs[Up].Describe(),
	}}
	l := &Link{profile: p, dirs: dirs, backend: BackendInProcess, mode: ModeInProcess, log: log, shaper: s,
		server: &Namespace{role: "server", sim: &simEnd{link: il, index: 0, role: "server"}},
		client: &Namespace{role: "client", sim: &simEnd{link: il, index: 1, role: "client"}}}
	log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", "requested by the caller", "mode", l.mode)
	return l, nil
}

func (s *inprocShaper) applied() []string { return s.lines }

func (s *inprocShaper) stats() (ShaperReport, bool) {
	var r ShaperReport
	for i, name := range []string{"server->client", "client->server"} {
		r.Directions = append(r.Directions, newShaperStats(name, s.link.Counters(Dir(i))))
	}
	return r, true
}

// sampler reads the direction's counters (no flow queues: those are the
// emulator's).
func (s *inprocShaper) sampler(e End) (*Sampler, error) {
	d := e.dir()
	return &Sampler{poll: func(q *QueueSample) error {
		c := s.link.Counters(d)
		q.At = time.Now()
		q.Packets, q.Bytes = int(c.Packets), int(c.Bytes)
		q.Drops, q.LossDrops, q.LimitDrops = c.Drops(), c.LossDrops, c.LimitDrops
		return nil
	}}, nil
}

// scheduleStart is when the link was built, if a direction has a
// schedule or a trace: both count from then.
func (s *inprocShaper) scheduleStart() time.Time {
	for _, d := range s.dirs {
		if d.Schedule != "" || d.Trace != "" {
			return s.link.Base()
		}
	}
	return time.Time{}
}

// appliedChanges: the in-process link applies each change at its time
// exactly, to the datagrams' write times.
func (s *inprocShaper) appliedChanges() ([]AppliedChange, error) {
	start := s.scheduleStart()
	if start.IsZero() {
		return nil, nil
	}
	return scheduledChanges(s.dirs, start, start, time.Now()), nil
}

func (s *inprocShaper) record(hs *HostState) {
	hs.EmulatorSeeds = []uint64{s.dirs[Down].Seed, s.dirs[Up].Seed}
}
func (s *inprocShaper) pid() int     { return 0 }
func (s *inprocShaper) err() error   { return nil }
func (s *inprocShaper) close() error { return s.link.Close() }
