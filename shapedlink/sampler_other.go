//go:build !linux

package shapedlink

// NewQdiscSampler returns a sampler for the root qdisc of dev in ns;
// qdiscs need Linux, so here it fails with an error wrapping
// errors.ErrUnsupported.
func NewQdiscSampler(ns *Namespace, dev string) (*Sampler, error) {
	return nil, errUnsupported
}
