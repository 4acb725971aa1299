package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/overlink"
)

// overLink runs c and reports it: the record or a summary, the warnings,
// and the exit status.
func overLink(c config, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := shapedlink.Reexec(); err != nil {
		fmt.Fprintln(stderr, "overlink:", err)
		return 1
	}
	// Caught before anything starts, so that no signal ends this process
	// while it holds a half-built link or a running command, and none is
	// lost: Run decides at each stage what a signal means there.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, overlink.Signals()...)
	defer signal.Stop(sigs)
	c.run.Stdin, c.run.Stdout, c.run.Stderr, c.run.Signals = stdin, stdout, stderr, sigs
	rec, err := overlink.Run(context.Background(), c.run)
	code := rec.ExitCode
	if err != nil {
		fmt.Fprintln(stderr, "overlink:", err)
		code = 1
		if intr := (overlink.Interrupted{}); errors.As(err, &intr) {
			code = 128 + int(intr.Signal)
		}
	}
	if rec.LinkError != "" {
		fmt.Fprintln(stderr, "overlink: the link broke while the command ran:", rec.LinkError)
	}
	finish(c, &rec, stderr)
	return code
}
