package shapedlink

import (
	"context"
	"time"
)

// Instruments are what a bench reads about a link while it runs, apart
// from the link itself: the host state for a record, the shaper's own
// account (ShaperStats) and process (EmulatorPID), the offloads read
// back, the egress queue (Sampler, SampleQueue) and the egress-hook
// counters (EgressCounters), and the schedule's progress (ScheduleStart,
// AppliedChanges). Get them with Link.Instruments.
type Instruments struct{ l *Link }

// Instruments returns the link's instruments.
func (l *Link) Instruments() *Instruments { return &Instruments{l: l} }

// Control is what an experiment does to a link's path while it runs:
// nftables filters on an end's egress (BlockUDP, DropRandom) and more
// addresses for the client (AddClientAddr, RemoveClientAddr, ClientAddrs),
// for path changes. Get it with Link.Control. Every control needs the
// namespace backends: on the in-process link each returns an error
// wrapping errors.ErrUnsupported.
type Control struct{ l *Link }

// Control returns the link's controls.
func (l *Link) Control() *Control { return &Control{l: l} }

// ShaperStats returns the shaper's counters and priority (the emulator's,
// or the in-process link's, whose priority is empty), and false when the
// backend keeps none (netem's counters are in the sampler's QueueSample). Counters run from the shaper's start, so they cover link
// setup and warm-up as well as the measured part of a run.
func (in *Instruments) ShaperStats() (ShaperReport, bool) { return in.l.shaper.stats() }

// EmulatorPID is the shaper process's id, or 0 when the backend has no
// process (netem, none).
func (in *Instruments) EmulatorPID() int { return in.l.shaper.pid() }

// Offload is the offload settings read back from every veth end after New
// set them (two ends for netem, four for the emulator, none in process).
func (in *Instruments) Offload() []Offload { return append([]Offload(nil), in.l.offload...) }

// Device is the name of the veth device at end e, inside e's namespace;
// "" for the in-process link, which has none.
func (in *Instruments) Device(e End) string {
	if in.l.Namespace(e).inProcess() {
		return ""
	}
	return in.l.dev(e)
}

// ScheduleStart is the time from which the link's schedules and traces
// count (the emulator's time zero, just before it became ready; for
// netem, when its schedule started; for the in-process link, when it was
// built); the zero Time when the link has neither.
func (in *Instruments) ScheduleStart() time.Time { return in.l.shaper.scheduleStart() }

// AppliedChanges lists the schedule's changes that have taken effect so
// far, in time order: for the emulator and the in-process link each at its
// time exactly; for netem
// as applied, with when the kernel acknowledged each. The error is why a
// netem schedule stopped, if it did.
func (in *Instruments) AppliedChanges() ([]AppliedChange, error) {
	return in.l.shaper.appliedChanges()
}

// Sampler returns a sampler for end e's egress queue: the netem qdisc on
// that end's veth (the discipline under it, with one), or the emulator's
// or the in-process link's queue for that direction.
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
