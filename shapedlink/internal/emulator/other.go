//go:build !linux

package emulator

import (
	"context"
	"errors"
	"os/exec"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

var errLinuxOnly = errors.New("emulator: the userspace link emulator needs Linux (AF_PACKET sockets and network namespaces)")

// Monitor watches one shaper process; on this platform there is none.
type Monitor struct{ cfg Config }

// Command reports that the emulator needs Linux.
func Command(cfg Config) (*exec.Cmd, *Monitor, error) { return nil, nil, errLinuxOnly }

// MaybeServe does nothing on this platform.
func MaybeServe() {}

// Seeds returns the configured seeds.
func (m *Monitor) Seeds() [2]uint64 { return [2]uint64{m.cfg.AToB.Seed, m.cfg.BToA.Seed} }

// Describe returns one tc-like line per direction.
func (m *Monitor) Describe() [2]string {
	return [2]string{describe(m.cfg.AToB), describe(m.cfg.BToA)}
}

// Snapshot returns zero counters.
func (m *Monitor) Snapshot() [2]linkspec.Counters { return [2]linkspec.Counters{} }

// Ready reports that the emulator needs Linux.
func (m *Monitor) Ready(ctx context.Context) error { return errLinuxOnly }

// Stop reports that the emulator needs Linux.
func (m *Monitor) Stop() error { return errLinuxOnly }

// Config returns the configuration.
func (m *Monitor) Config() Config { return m.cfg }

// Priority reports that there is no shaper.
func (m *Monitor) Priority() string { return "none (not Linux)" }

// PID returns 0: there is no shaper process.
func (m *Monitor) PID() int { return 0 }

// Exited returns a closed channel: there is no shaper process.
func (m *Monitor) Exited() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
