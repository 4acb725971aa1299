//go:build !linux

package shapedlink

// closeNamespaces has nothing to drop: no namespace exists here.
func closeNamespaces(...*Namespace) []error { return nil }
