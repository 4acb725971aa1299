//go:build !linux

package overlink

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

func run(ctx context.Context, c Config, rec *Record) error {
	return fmt.Errorf("shaped links need Linux network namespaces: %w", errors.ErrUnsupported)
}

func signalName(s syscall.Signal) string { return s.String() }
