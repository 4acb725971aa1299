package shapedlink

import "time"

// A shaper carries both directions of a link. There is one per backend:
// kernel netem on each veth end (shaper_netem_linux.go), the emulator
// process between the ends (shaper_emulator_linux.go), nothing at all for
// BackendNone (unshaped, shaper_linux.go), and the in-process carrier
// (shaper_inproc.go). New builds what the backend needs (the topology,
// or the in-process ends) and starts its shaper; after that a Link asks
// its shaper, never which backend it has.
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
