package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/singleflow"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

func main() {
	gorun.Follow()
	os.Exit(run())
}

func run() int {
	c, workdir, err := parseFlags(os.Args[1:])
	if err != nil {
		return cli.Exit(os.Stderr, "singleflow", err)
	}
	bad := func(err error) int { return cli.Exit(os.Stderr, "singleflow", err) }
	rec := newRecord(c)
	prior, err := resume(workdir, rec)
	if err != nil {
		return bad(err)
	}
	c.StateDir = filepath.Join(workdir, "states")
	if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
		return bad(err)
	}
	if err := shapedlink.Reexec(); err != nil {
		fmt.Fprintf(os.Stderr, "singleflow: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	measured := map[runKey]bool{}
	for _, r := range prior {
		if r.Error == "" {
			measured[keyOf(r)] = true
		}
	}
	c.Skip = func(r singleflow.Result) bool { return measured[keyOf(r)] }
	total := len(c.Profiles)*len(c.Losses)*len(c.Flows)*c.Repeats - len(measured)
	if len(prior) > 0 {
		fmt.Fprintf(os.Stderr, "singleflow: resuming %s: %d runs measured, %d to run\n", workdir, len(measured), total)
	}
	all := prior
	n := 0
	var werr error
	_, err = singleflow.Run(ctx, c, func(r singleflow.Result) {
		n++
		all = replace(all, r)
		if werr == nil {
			werr = rec.write(workdir, all, false)
		}
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "[%d/%d] %s %g%% %s r%d: FAILED: %s\n", n, total, r.Profile, r.Loss, r.Flow, r.Repeat, r.Error)
			return
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s %g%% %s r%d: %.2f Mbit/s, iw %.0f, %d loss episodes\n", n, total, r.Profile, r.Loss, r.Flow, r.Repeat, r.GoodputMbit, r.InitialWindow, len(r.Backoffs))
	})
	failed := 0
	for _, r := range all {
		if r.Error != "" {
			failed++
		}
	}
	if len(all) > 0 {
		if werr = errors.Join(werr, rec.write(workdir, all, true)); werr != nil {
			fmt.Fprintf(os.Stderr, "singleflow: %v\n", werr)
			return 1
		}
		fmt.Print(singleflow.Markdown(singleflow.Summarise(all), "tcp-"+quicreno.Name, "quic"))
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "singleflow: interrupted after %d of %d runs; what was measured is in %s, and the same command resumes it\n", n, total, workdir)
		return 130
	case err != nil:
		fmt.Fprintf(os.Stderr, "singleflow: %v\n", err)
		return 1
	case failed > 0:
		fmt.Fprintf(os.Stderr, "singleflow: %d of %d runs failed (kept in results.json with their reasons; the same command runs them again)\n", failed, len(all))
		return 1
	}
	return 0
}

// parseFlags reads the command line into a validated configuration and
// the work directory.
func parseFlags(args []string) (c singleflow.Config, workdir string, err error) {
	c = singleflow.Defaults()
	fs := flag.CommandLine
	lf := linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profiles | linkflag.Backend | linkflag.Seed | linkflag.Emulator, Profiles: "80:10 150:2",
		KeepAwake: true})
	losses := fs.String("losses", "0 1 2", "loss percentages, each applied to both directions of every profile")
	flows := fs.String("flows", flowNames(singleflow.DefaultFlows()), "flows: quic, or tcp-<controller>")
	fs.IntVar(&c.Repeats, "repeats", c.Repeats, "runs per flow and cell")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "length of each flow")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "start of each flow left out of its goodput")
	wd := fs.String("workdir", "results/singleflow", "where results.json (each run as it ends) and summary.md are written; a rerun with the same settings resumes it")
	fs.Var((*uint32Flag)(&c.Controller.BetaPercent), "quicreno-beta", "quicreno: `percent` of the window kept after a loss")
	fs.Var((*uint32Flag)(&c.Controller.InitialWindow), "quicreno-iw", "quicreno: initial window, in `packets`")
	pacing := fs.Bool("quicreno-pacing", c.Controller.Pacing, "quicreno: ask the kernel to pace")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: singleflow [flags]\n\nOne bulk flow at a time per controller: goodput, back-off after a loss, initial window.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	if err := cli.Parse(fs, args); err != nil {
		return c, "", err
	}
	if c.Profiles, err = lf.Profiles(); err != nil {
		return c, "", err
	}
	if c.Link, err = lf.Options(); err != nil {
		return c, "", err
	}
	c.Losses = nil
	for _, f := range strings.Fields(*losses) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return c, "", fmt.Errorf("-losses: %q is not a number", f)
		}
		c.Losses = append(c.Losses, v)
	}
	if c.Flows, err = singleflow.ParseFlows(strings.Fields(*flows)); err != nil {
		return c, "", err
	}
	c.Controller.Pacing = *pacing
	if err := c.Validate(); err != nil {
		return c, "", err
	}
	for _, f := range c.Flows {
		if cc, _ := f.PinnedCC(); cc == quicreno.Name {
			if err := quicreno.CheckLoad(); err != nil {
				return c, "", fmt.Errorf("flow %s: %w", f, err)
			}
		}
	}
	return c, *wd, nil
}

// record is results.json: the settings, the runs and their cells.
type record struct {
	Profiles  []string  `json:"profiles"`
	Losses    []float64 `json:"losses"`
	Flows     []flow    `json:"flows"`
	Repeats   int       `json:"repeats"`
	Duration  string    `json:"duration"`
	Warmup    string    `json:"warmup"`
	KeepAwake bool      `json:"keep_awake"`
	// KeepAwakeAuto is -keep-awake auto: each run's host state has the
	// probe that decided.
	KeepAwakeAuto bool                `json:"keep_awake_auto,omitempty"`
	Window        time.Duration       `json:"departure_window_ns,omitempty"`
	Controller    quicreno.Params     `json:"quicreno"`
	Results       []singleflow.Result `json:"results"`
	Cells         []singleflow.Cell   `json:"cells"`
}

// newRecord is c's settings as results.json records them.
func newRecord(c singleflow.Config) record {
	var ps []string
	for _, p := range c.Profiles {
		ps = append(ps, p.String())
	}
	return record{Profiles: ps, Losses: c.Losses, Flows: flowsOf(c.Flows), Repeats: c.Repeats, Duration: c.Duration.String(), Warmup: c.Warmup.String(),
		KeepAwake: c.Link.EmulatorKeepAwake, KeepAwakeAuto: c.Link.EmulatorKeepAwakeAuto, Window: c.Link.EmulatorDepartureWindow, Controller: c.Controller}
}

// flow is a flow as results.json records it: its name, the transport arm
// under it and the controller it pins.
type flow struct {
	Name string `json:"name"`
	Arm  string `json:"arm"`
	CC   string `json:"cc,omitempty"`
}

func flowsOf(arms []measure.Arm) []flow {
	out := make([]flow, len(arms))
	for i, a := range arms {
		out[i] = flow{Name: string(a), Arm: string(transport.ArmQUIC)}
		if cc, ok := a.PinnedCC(); ok {
			out[i].Arm, out[i].CC = string(transport.ArmTCP), cc
		}
	}
	return out
}

func flowNames(arms []measure.Arm) string {
	var names []string
	for _, a := range arms {
		names = append(names, string(a))
	}
	return strings.Join(names, " ")
}

// settings is the record less its runs, to compare two records'.
func (r record) settings() string {
	r.Results, r.Cells = nil, nil
	b, _ := json.Marshal(r)
	return string(b)
}

// resume reads dir's results.json, if there is one, and returns its runs
// when it was made with the settings of want; other settings are an
// error.
func resume(dir string, want record) ([]singleflow.Result, error) {
	var had record
	err := results.ReadJSON(filepath.Join(dir, "results.json"), &had)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("-workdir %s: %w; give another -workdir", dir, err)
	case had.settings() != want.settings():
		return nil, fmt.Errorf("-workdir %s holds singleflow runs made with other settings (%s); give the same flags to resume them, or another -workdir", dir, had.settings())
	}
	return had.Results, nil
}

// runKey names a run.
type runKey struct {
	profile, flow string
	loss          float64
	repeat        int
}

func keyOf(r singleflow.Result) runKey { return runKey{r.Profile, r.Flow, r.Loss, r.Repeat} }

// replace puts r in place of the run of the same name in rs, or adds it.
func replace(rs []singleflow.Result, r singleflow.Result) []singleflow.Result {
	for i := range rs {
		if keyOf(rs[i]) == keyOf(r) {
			rs[i] = r
			return rs
		}
	}
	return append(rs, r)
}

// write saves the runs in dir's results.json and, when summary, the
// summary in summary.md.
func (r record) write(dir string, rs []singleflow.Result, summary bool) error {
	r.Results, r.Cells = rs, singleflow.Summarise(rs)
	if err := results.WriteJSON(filepath.Join(dir, "results.json"), r); err != nil {
		return err
	}
	if !summary {
		return nil
	}
	md := singleflow.Markdown(r.Cells, "tcp-"+quicreno.Name, "quic")
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(md), 0o644)
}

// uint32Flag is a flag holding a uint32: a value beyond its range is an
// error, not wrapped around.
type uint32Flag uint32

func (f *uint32Flag) String() string { return strconv.FormatUint(uint64(*f), 10) }

func (f *uint32Flag) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return fmt.Errorf("give a whole number from 0 to %d", uint32(math.MaxUint32))
	}
	*f = uint32Flag(v)
	return nil
}
