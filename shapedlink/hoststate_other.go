//go:build !linux

package shapedlink

// readHostKernel has nothing to read: the kernel fields are Linux's.
func (l *Link) readHostKernel(hs *HostState) error { return nil }
