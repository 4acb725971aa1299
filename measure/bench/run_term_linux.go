package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal (its termios can be read).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
