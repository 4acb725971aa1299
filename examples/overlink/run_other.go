//go:build !linux

package main

import (
	"errors"
	"fmt"
	"io"
)

func overLink(c config, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "overlink:", fmt.Errorf("shaped links need Linux network namespaces: %w", errors.ErrUnsupported))
	return 1
}
