//go:build !linux

package main

import (
	"context"
	"errors"
)

func maybeRunRole() {}

func runOne(context.Context, runConfig) (Record, error) {
	return Record{}, errors.New("pathchange needs Linux network namespaces")
}

func prepare() error { return nil }
