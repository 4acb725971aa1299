//go:build !linux

package spicelive

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/spicelike"
)

var errLinuxOnly = errors.New("spicelive runs on Linux only (network namespaces, Xspice)")

// MaybeRunRole does a replay's or synthetic run's role and exits, if this
// process is one (bench.MaybeRunRole); live sessions run on Linux only.
func MaybeRunRole() { bench.MaybeRunRole() }

// Prepare fails: live sessions run on Linux only.
func Prepare() error { return errLinuxOnly }

// Run fails: live sessions run on Linux only.
func Run(context.Context, Config, io.Writer, *slog.Logger) error { return errLinuxOnly }

// recordSession fails: live sessions run on Linux only.
func recordSession(context.Context, Config, *slog.Logger) (*spicelike.Replay, error) {
	return nil, errLinuxOnly
}
