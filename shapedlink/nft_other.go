//go:build !linux

package shapedlink

// nftCounters are an end's nftables counters; nftables needs Linux, so
// here a link never has any.
type nftCounters struct{}

// Filter is an nftables rule on one end's egress hook that drops packets
// and counts what it dropped; there are none off Linux.
type Filter struct{}

// String says what the filter does: "" here.
func (f *Filter) String() string { return "" }

// Dropped reads how many packets and bytes the filter dropped; here it
// fails.
func (f *Filter) Dropped() (Counter, error) { return Counter{}, errUnsupported }

// Remove deletes the filter; here it fails.
func (f *Filter) Remove() error { return errUnsupported }

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
