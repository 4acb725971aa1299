//go:build !linux

package shapedlink

// EgressCounters reads end e's egress counters; the in-process link, the
// only one here, has no egress hook.
func (in *Instruments) EgressCounters(e End) (EgressCounters, error) {
	if err := e.valid(); err != nil {
		return EgressCounters{}, err
	}
	return EgressCounters{}, noEgressHook("EgressCounters", e)
}

// BlockUDP drops every UDP packet end e sends; the in-process link, the
// only one here, has no egress hook to drop them at.
func (c *Control) BlockUDP(e End) (*Filter, error) {
	if err := e.valid(); err != nil {
		return nil, err
	}
	return nil, noEgressHook("BlockUDP", e)
}

// DropRandom drops pct percent of the packets end e sends; the in-process
// link, the only one here, has no egress hook to drop them at.
func (c *Control) DropRandom(e End, pct float64) (*Filter, error) {
	if err := e.valid(); err != nil {
		return nil, err
	}
	return nil, noEgressHook("DropRandom", e)
}
