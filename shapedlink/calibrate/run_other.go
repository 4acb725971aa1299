//go:build !linux

package calibrate

import (
	"context"
	"errors"
)

// Run needs Linux's network namespaces: elsewhere it refuses.
func Run(ctx context.Context, c Config) (Report, error) {
	return Report{}, errors.New("calibrate needs Linux (network namespaces)")
}

// tracer is the Linux tracing session; there is none elsewhere.
type tracer struct{}
