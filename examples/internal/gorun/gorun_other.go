//go:build !linux

package gorun

// Follow does nothing on this system, and reports false.
func Follow() bool { return false }
