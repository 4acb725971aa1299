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
