//go:build !linux

package pathchange

import (
	"context"
	"errors"
)

// MaybeRunRole returns at once: roles run on Linux only.
func MaybeRunRole() {}

func runOne(context.Context, runConfig) (Record, error) {
	return Record{}, errors.New("pathchange needs Linux network namespaces")
}

// Prepare does nothing here; Run fails on every run instead.
func Prepare() error { return nil }
