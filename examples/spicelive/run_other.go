//go:build !linux

package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

var errLinuxOnly = errors.New("spicelive runs on Linux only (network namespaces, Xspice)")

func maybeRunRole() {}

func prepare() error { return errLinuxOnly }

func missingPrograms() string { return "" }

func runAll(context.Context, config, io.Writer, *slog.Logger) error { return errLinuxOnly }
