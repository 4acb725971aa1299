package shapedlink

import (
	"context"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
)

// Instruments are what a bench reads about a running link: HostState,
// ShaperStats, EmulatorPID, Offload, Device, Sampler and SampleQueue,
// EgressCounters, ScheduleStart and AppliedChanges.
type Instruments struct{ l *Link }

// Instruments returns the link's instruments.
func (l *Link) Instruments() *Instruments { return &Instruments{l: l} }

// Control is what an experiment does to a running link's path: filters
// on an end's egress (BlockUDP, DropRandom) and the client's addresses
// (AddClientAddr, RemoveClientAddr, ClientAddrs). In process each returns
// an error wrapping errors.ErrUnsupported.
type Control struct{ l *Link }

// Control returns the link's controls.
func (l *Link) Control() *Control { return &Control{l: l} }

// ShaperStats returns the emulator's or the in-process link's counters
// since it started, and false for netem (whose counters are in its
// QueueSamples).
func (in *Instruments) ShaperStats() (ShaperReport, bool) { return in.l.shaper.stats() }

// EmulatorPID is the shaper process's id, or 0 when there is none.
func (in *Instruments) EmulatorPID() int { return in.l.shaper.pid() }

// Offload is the offload settings read back from every veth end.
func (in *Instruments) Offload() []Offload { return append([]Offload(nil), in.l.offload...) }

// Device is the name of end e's veth in its namespace ("" in process).
func (in *Instruments) Device(e End) string {
	if in.l.Namespace(e).inProcess() {
		return ""
	}
	return in.l.dev(e)
}

// ScheduleStart is the time the link's schedules and traces count from,
// or the zero Time when it has neither.
func (in *Instruments) ScheduleStart() time.Time { return in.l.shaper.scheduleStart() }

// AppliedChanges lists the schedule's changes that have taken effect, in
// time order, and why a netem schedule stopped, if it did.
func (in *Instruments) AppliedChanges() ([]AppliedChange, error) {
	return in.l.shaper.appliedChanges()
}

// Sampler returns a sampler of end e's egress queue.
func (in *Instruments) Sampler(e End) (*Sampler, error) {
	if err := e.valid(); err != nil {
		return nil, err
	}
	return in.l.shaper.sampler(e)
}

// SampleQueue samples end e's egress queue every interval until ctx is
// done; see Sampler.Run.
func (in *Instruments) SampleQueue(ctx context.Context, e End, interval time.Duration) ([]QueueSample, error) {
	s, err := in.Sampler(e)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, interval)
}

// HostState reads the record for this link.
func (in *Instruments) HostState() (HostState, error) {
	l := in.l
	hs := HostState{
		NetemAvailable: l.netemAvailable,
		Backend:        l.backend,
		OffloadMode:    l.offloadMode,
		Mode:           l.mode,
		Profile:        l.profile.String(),
		Limit:          l.profile.Direction(Down).Limit,
		Applied:        l.Applied(),
		Offload:        in.Offload(),
	}
	l.shaper.record(&hs)
	if err := l.readHostKernel(&hs); err != nil {
		return hs, err
	}
	bi := buildinfo.Read()
	hs.Module, hs.Version, hs.GoVersion = bi.Module, bi.Version, bi.GoVersion
	hs.Commit, hs.CommitSource, hs.CommitMissing = bi.Commit, bi.CommitSource, bi.CommitMissing
	return hs, nil
}

// CrossFlows is each cross flow's account so far (the profile's cross
// option), in the order the profile gives them, down before up; nil for a
// link without them.
func (in *Instruments) CrossFlows() []CrossReport { return in.l.cross.reports() }
