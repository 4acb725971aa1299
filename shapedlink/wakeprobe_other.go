//go:build !linux

package shapedlink

import (
	"errors"
	"fmt"
)

// ProbeWake measures how late this host wakes a thread for its timer
// (once per process); it is Linux's, where the emulator runs.
func ProbeWake() (WakeProbe, error) {
	return WakeProbe{}, fmt.Errorf("shapedlink: the timer wake-up probe is for Linux, where the emulator runs: %w", errors.ErrUnsupported)
}
