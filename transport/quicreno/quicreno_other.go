//go:build !linux

package quicreno

import "errors"

// Controller is the controller registered in the kernel; Linux only.
type Controller struct{}

// Load fails: a BPF congestion control needs Linux.
func Load(p Params) (*Controller, error) {
	return nil, errors.New("quicreno: a BPF congestion control needs Linux 6.4 or later: choose another controller")
}

// Close does nothing.
func (c *Controller) Close() error { return nil }

// CheckLoad says why Load would be refused: it needs Linux.
func CheckLoad() error {
	return errors.New("quicreno: a BPF congestion control needs Linux 6.4 or later: choose another controller")
}
