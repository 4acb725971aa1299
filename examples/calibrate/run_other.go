//go:build !linux

package main

import (
	"context"
	"errors"
	"log/slog"
)

func run(ctx context.Context, c config, log *slog.Logger) (Report, error) {
	return Report{}, errors.New("calibrate needs Linux (network namespaces)")
}

func prepare() error { return nil }
