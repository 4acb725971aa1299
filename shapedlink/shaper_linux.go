package shapedlink

import "time"

// A shaper carries both directions of a link. There is one per backend:
// kernel netem on each veth end (shaper_netem_linux.go), the emulator
// process between the ends (shaper_emulator_linux.go), and nothing at all
// for BackendNone (unshaped, below). New builds the topology the backend
// needs and starts its shaper; after that a Link asks its shaper, never
// which backend it has.
type shaper interface {
	// applied describes the shaping in force, one tc-like line per
	// direction, down first.
	applied() []string
	// stats is the shaper's own account of each direction, when it keeps
	// one (netem's counters are in its queue samples instead).
	stats() (ShaperReport, bool)
	// sampler polls end e's egress queue.
	sampler(e End) (*Sampler, error)
	// scheduleStart is the time the schedules and traces count from; the
	// zero Time when the link has neither.
	scheduleStart() time.Time
	// appliedChanges lists the schedules' changes that have taken effect
	// so far, and why the schedule stopped, if it did.
	appliedChanges() ([]AppliedChange, error)
	// seeds fills in the host state's account of the random draws.
	seeds(hs *HostState)
	// pid is the shaper process's id, or 0 when it has none.
	pid() int
	// err says why the link no longer shapes as configured, or nil.
	err() error
	// close stops the shaping; the namespaces go with the Link.
	close() error
}

// ends are a link's two veth ends as a shaper sees them: each end's
// namespace and device, indexed by End (ServerEnd's egress is Down).
type ends struct {
	ns  [2]*Namespace
	dev [2]string
}

// unshaped is BackendNone's shaper: a plain veth pair, nothing to run.
type unshaped struct{ ends ends }

func (u unshaped) sampler(e End) (*Sampler, error) {
	return NewQdiscSampler(u.ends.ns[e], u.ends.dev[e])
}

func (unshaped) applied() []string {
	return []string{"server " + serverDev + ": unshaped", "client " + clientDev + ": unshaped"}
}
func (unshaped) stats() (ShaperReport, bool)              { return ShaperReport{}, false }
func (unshaped) scheduleStart() time.Time                 { return time.Time{} }
func (unshaped) appliedChanges() ([]AppliedChange, error) { return nil, nil }
func (unshaped) seeds(*HostState)                         {}
func (unshaped) pid() int                                 { return 0 }
func (unshaped) err() error                               { return nil }
func (unshaped) close() error                             { return nil }
