package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/results"
)

func main() {
	// A run's processes are this binary again: the replay's and the
	// synthetic bench's roles (bench), and the live session's (ours).
	bench.MaybeRunRole()
	maybeRunRole()
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

func mainCode(args []string, stdout, stderr io.Writer) int {
	c, summaryOnly, err := parseFlags(args, stderr, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 2
	}
	if summaryOnly {
		return printSummary(c.Workdir, stdout, stderr)
	}
	if slices.Contains(c.Readings, ReadingLive) || slices.Contains(c.Readings, ReadingReplay) {
		if miss := missingPrograms(); miss != "" {
			fmt.Fprintln(stderr, "spicelive: a live session cannot run here:", miss)
			return 2
		}
	}
	if err := prepare(); err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err = runAll(ctx, c, stderr, log)
	switch {
	case ctx.Err() != nil || errors.Is(err, bench.ErrInterrupted):
		fmt.Fprintf(stderr, "spicelive: interrupted; what was measured is kept in %s and the same command resumes it\n", c.Workdir)
		return 130
	case errors.Is(err, errWorkdir):
		fmt.Fprintln(stderr, "spicelive:", err)
		return 2
	case err != nil && !errors.Is(err, errRunsFailed):
		fmt.Fprintln(stderr, "spicelive:", err)
		fmt.Fprintf(stderr, "spicelive: what was measured is kept in %s; the same command resumes it\n", c.Workdir)
		return 1
	}
	code := 0
	if err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		code = 1
	}
	if serr := summarise(stdout, c); serr != nil {
		fmt.Fprintln(stderr, "spicelive:", serr)
		code = 1
	}
	return code
}

// printSummary prints the summary of a work directory, with the settings
// it was made with.
func printSummary(workdir string, stdout, stderr io.Writer) int {
	var c config
	if err := results.ReadJSON(filepath.Join(workdir, settingsFile), &c); err != nil {
		fmt.Fprintf(stderr, "spicelive: %s holds no spicelive runs: %v\n", workdir, err)
		return 1
	}
	c.Workdir = workdir
	if err := summarise(stdout, c); err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 1
	}
	return 0
}
