//go:build !linux

package bench

import "os"

// isTerminal reports whether f is a terminal. The matrix commands run only
// on Linux; elsewhere it answers false, so progress is logged line by line.
func isTerminal(f *os.File) bool { return false }
