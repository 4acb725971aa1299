//go:build !linux

package shapedlink

// dev is the veth device at end e: none here.
func (l *Link) dev(e End) string { return "" }
