package shapedlink

import "time"

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
func (unshaped) record(*HostState)                        {}
func (unshaped) pid() int                                 { return 0 }
func (unshaped) err() error                               { return nil }
func (unshaped) close() error                             { return nil }
