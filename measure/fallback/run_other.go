//go:build !linux

package fallback

import (
	"context"
	"errors"
	"log/slog"
)

var errLinux = errors.New("fallback needs Linux (network namespaces and nftables)")

// Prepare fails: the experiment needs Linux.
func Prepare() error { return errLinux }

// MaybeRunRole returns at once: roles run on Linux only.
func MaybeRunRole() {}

func runJob(context.Context, Config, job, *slog.Logger) (Record, error) { return Record{}, errLinux }
