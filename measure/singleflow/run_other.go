//go:build !linux

package singleflow

import (
	"context"
	"errors"
)

// Run needs Linux network namespaces.
func Run(ctx context.Context, c Config, progress func(Result)) ([]Result, error) {
	return nil, errors.New("singleflow: shaped links need Linux")
}
