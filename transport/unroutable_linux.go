package transport

import (
	"errors"

	"golang.org/x/sys/unix"
)

// isUnroutable reports whether a send failed because the host has, for
// now, no way to the peer: no route (ENETUNREACH), an unreachable route or
// neighbour (EHOSTUNREACH), or a device that is down (ENETDOWN).
func isUnroutable(err error) bool {
	return errors.Is(err, unix.ENETUNREACH) || errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.ENETDOWN)
}
