package shapedlink

import "time"

// A shaper carries both directions of a link, one kind per backend.
type shaper interface {
	applied() []string // down first
	stats() (ShaperReport, bool)
	sampler(e End) (*Sampler, error)
	scheduleStart() time.Time
	appliedChanges() ([]AppliedChange, error)
	record(hs *HostState) // the shaper's own settings: seeds, CPUs kept awake
	pid() int
	err() error
	close() error
}

// backSeed is the up direction's seed for a link seeded with seed: zero
// for zero, else seed plus splitmix64's increment.
func backSeed(seed uint64) uint64 {
	if seed == 0 {
		return 0
	}
	if b := seed + 0x9e3779b97f4a7c15; b != 0 {
		return b
	}
	return 1
}
