package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/results"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "summarise:", cli.Line(err))
		os.Exit(cli.ExitUsage)
	}
}

// usage heads the -help text, above the flags.
const usage = "usage: summarise [-json] [-plots DIR] [-warmup DURATION] WORKDIR [WORKDIR ...]\n\n" +
	"Reads every run.json under WORKDIR and prints the summary as markdown.\n" +
	"Several WORKDIRs are the shards of one matrix (each run with -shard i/n):\n" +
	"they are merged into one summary after checking that they hold one matrix,\n" +
	"each shard once and each run once; runs still missing are listed on stderr.\n\n"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("summarise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the figures as JSON instead of markdown")
	plotDir := fs.String("plots", "", "also write PNG and SVG plots, and their index plots.md, into this directory")
	warmup := fs.Duration("warmup", 0, "discard this much from the start of every run instead of the warm-up the runs recorded (e.g. 5s)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := cli.ParseWithArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("need a results directory (the WORKDIR the matrix wrote to), or the work directories of a matrix's shards; see -h")
	}
	dirs := fs.Args()
	opts := report.Options{Source: strings.Join(dirs, ", ")}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "warmup" {
			opts.OverrideWarmup, opts.Warmup = true, *warmup
		}
	})
	if opts.OverrideWarmup && opts.Warmup < 0 {
		return fmt.Errorf("-warmup %v is negative; give zero or a positive duration such as 5s", opts.Warmup)
	}

	for _, dir := range dirs {
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("results directory %s does not exist; give the WORKDIR the matrix wrote to", dir)
		case err != nil:
			return err
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory; give the WORKDIR the matrix wrote to, not a file in it", dir)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	runs, err := loadRuns(dirs, stderr)
	if err != nil {
		return err
	}
	rep, err := report.Build(runs, opts)
	if err != nil {
		return err
	}
	if *plotDir != "" {
		files, err := render.WritePlots(*plotDir, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "summarise: wrote %d plot files to %s (index: %s)\n", len(files), *plotDir, render.PlotIndex)
		if path, err := render.WriteNeighbours(*plotDir, rep); err != nil {
			return err
		} else if path != "" {
			fmt.Fprintf(stderr, "summarise: the neighbours' figures per run in %s\n", path)
		}
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return render.WriteMarkdown(stdout, rep)
}

// loadRuns reads one results directory (plan.LoadWorkdir), or merges the
// work directories of a matrix's shards (plan.LoadShards), saying on
// stderr which run.json files it did not count and what the merge still
// lacks.
func loadRuns(dirs []string, stderr io.Writer) ([]results.Run, error) {
	if len(dirs) == 1 {
		l, err := plan.LoadWorkdir(dirs[0])
		if err != nil {
			return nil, err
		}
		if note := results.IgnoredNote(l.Ignored); note != "" {
			fmt.Fprintf(stderr, "summarise: %s\n", note)
		}
		return l.Runs, nil
	}
	merged, err := plan.LoadShards(dirs)
	if err != nil {
		return nil, err
	}
	if note := results.IgnoredNote(merged.Ignored); note != "" {
		fmt.Fprintf(stderr, "summarise: %s\n", note)
	}
	if note := merged.Note(); note != "" {
		fmt.Fprintf(stderr, "summarise: %s\n", note)
	}
	return merged.Runs, nil
}
