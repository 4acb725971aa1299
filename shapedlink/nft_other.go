//go:build !linux

package shapedlink

// Filter is an nftables rule on one end's egress hook that drops packets
// and counts what it dropped. Filters need Linux: elsewhere none exists,
// and its methods return errors wrapping errors.ErrUnsupported, or zero
// values.
type Filter struct{}

// String says what the filter does: "" here.
func (f *Filter) String() string { return "" }

// Dropped reads how many packets and bytes the filter dropped; here it
// fails.
func (f *Filter) Dropped() (Counter, error) { return Counter{}, errUnsupported }

// Remove deletes the filter; here it fails.
func (f *Filter) Remove() error { return errUnsupported }
