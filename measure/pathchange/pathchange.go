package pathchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// Config is one experiment: the runs to make and where their records go.
type Config struct {
	// Profile is the link; its own loss is ignored, each of Losses (per
	// direction, in percent) is applied in turn.
	Profile shapedlink.Profile
	Losses  []float64
	// Arms are run interleaved within each repeat: tcp, quic or
	// quic-per-channel.
	Arms []transport.Arm
	// Repeats per loss level and arm (5 for a spread).
	Repeats int
	// Workload is the session: its channels, duration, warm-up and
	// round-trip timeout (spicelike.Defaults with a shorter duration, say).
	Workload spicelike.Config
	// Change is when and how the client moves (At, Order, ProbeTimeout).
	Change Change
	// Linger is how long a server is left running after its client ended,
	// to notice anything by itself, before it is stopped.
	Linger time.Duration
	// Workdir is the results directory: each run goes to
	// Workdir/<order>/<cell>/<arm>/r<N>/, the summary to Workdir/<order>/.
	Workdir string
	// Link is the options of every run's link (backend, seed, ...).
	Link shapedlink.Options
	// Qlog writes a qlog file per QUIC connection into each run directory.
	Qlog bool
	// Redo measures runs again that already have a record; without it a
	// recorded run is kept, unless it was recorded as failed.
	Redo bool
	// Reanalyse measures nothing: it recomputes every record from the
	// role processes' files already in Workdir.
	Reanalyse bool
	// Logger receives the runs' warnings (nil: slog.Default()).
	Logger *slog.Logger
	// Progress, if set, receives a line as each run starts and ends.
	Progress io.Writer
}

// validate says what is wrong with c, every problem at once, or nil.
func (c Config) validate() error {
	var errs []error
	if err := c.Profile.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, l := range c.Losses {
		if l < 0 || l >= 100 {
			errs = append(errs, fmt.Errorf("pathchange: loss %g%%: want a percentage in [0, 100)", l))
		}
	}
	for _, a := range c.Arms {
		if _, err := transport.ParseArm(string(a)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.Losses) == 0 || len(c.Arms) == 0 {
		errs = append(errs, errors.New("pathchange: give at least one loss level (Losses) and one arm (Arms)"))
	}
	if c.Repeats < 1 {
		errs = append(errs, fmt.Errorf("pathchange: Repeats %d: need at least 1 (5 for a spread)", c.Repeats))
	}
	if c.Change.Order != OrderMakeFirst && c.Change.Order != OrderBreakFirst {
		errs = append(errs, fmt.Errorf("pathchange: Change.Order %q: want %s or %s", c.Change.Order, OrderMakeFirst, OrderBreakFirst))
	}
	if c.Change.At <= 0 || c.Change.At >= c.Workload.Duration {
		errs = append(errs, fmt.Errorf("pathchange: Change.At %v must fall inside the %v run (Workload.Duration)", c.Change.At, c.Workload.Duration))
	}
	if c.Change.ProbeTimeout <= 0 || c.Linger < 0 {
		errs = append(errs, errors.New("pathchange: Change.ProbeTimeout must be positive and Linger not negative"))
	}
	if err := c.Workload.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Workdir == "" {
		errs = append(errs, errors.New("pathchange: Workdir is empty: name a results directory"))
	}
	return errors.Join(errs...)
}

// Result is what Run made of every run of a Config.
type Result struct {
	// Records are the runs' records in plan order: loss level, then
	// repeat, then arm. A run that could not be measured has Failed set.
	Records []Record
	// Rows summarise Records per loss level and arm (summarise).
	Rows []Row
	// Summary is the markdown Run wrote to Workdir/<order>/summary.md: a
	// line saying what was run, then writeTable's tables.
	Summary string
}

// Run makes every run of c that has no record yet (every run with Redo),
// or with Reanalyse recomputes every record, and writes the summary, as
// summary.md and summary.json, to Workdir/<order>/. Building links needs
// privilege: call Prepare first. Run stops at the first run it cannot
// make or reanalyse (a run that fails is recorded, not an error) and
// returns the error; when only writing the summary fails, the Result is
// complete and the error says so.
func Run(ctx context.Context, c Config) (Result, error) {
	if err := c.validate(); err != nil {
		return Result{}, err
	}
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	plan := c.plan()
	var res Result
	for i, rc := range plan {
		if c.Reanalyse {
			rec, err := reanalyse(rc)
			if err != nil {
				return res, err
			}
			res.Records = append(res.Records, rec)
			continue
		}
		if !c.Redo {
			// A failed run is kept until it is redone, but never
			// counted as done; nor is a record of another run.
			if rec, err := results.ReadExtra[Record](rc.dir(), recordFile); err == nil && rec.Failed == "" && rc.names(rec) {
				res.Records = append(res.Records, rec)
				continue
			}
		}
		fmt.Fprintf(progress, "[%d/%d] loss %g%% %s r%d (%s)\n", i+1, len(plan), rc.Cell.LossPct, rc.Arm, rc.Repeat, rc.Change.Order)
		rec, err := runOne(ctx, rc)
		if err != nil {
			return res, err
		}
		fmt.Fprintf(progress, "    survived %v (%s); stall %v open %v\n", rec.Survived, rec.Why, rec.Stall.Gap.Round(time.Millisecond), rec.Stall.Open)
		res.Records = append(res.Records, rec)
	}
	res.Rows = summarise(res.Records)
	var b strings.Builder
	fmt.Fprintf(&b, "Path change at %v into a %v run, profile %s, %d repeats; figures are median [min–max] over repeats.\n\n",
		c.Change.At, c.Workload.Duration, c.Profile.WithLoss(0), c.Repeats)
	writeTable(&b, res.Rows)
	res.Summary = b.String()
	dir := filepath.Join(c.Workdir, c.Change.Order)
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(res.Summary), 0o644); err != nil {
		return res, err
	}
	return res, results.WriteJSON(filepath.Join(dir, "summary.json"), res.Rows)
}

func (c Config) plan() []runConfig {
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	var out []runConfig
	for _, loss := range c.Losses {
		cell := results.Cell{
			Profile: c.Profile.WithLoss(0).String(), RTTms: float64(c.Profile.RoundTrip()) / float64(time.Millisecond),
			RateMbit: c.Profile.RateMbit, LossPct: loss, CC: "reno",
		}
		for r := 1; r <= c.Repeats; r++ {
			for _, arm := range c.Arms {
				out = append(out, runConfig{Cell: cell, Profile: c.Profile.WithLoss(loss), Arm: arm, Repeat: r,
					Workload: c.Workload, Change: c.Change, Workdir: filepath.Join(c.Workdir, c.Change.Order),
					Link: c.Link, Qlog: c.Qlog, Linger: c.Linger, Logger: log})
			}
		}
	}
	return out
}

// Failures is "N of M measurements failed (which)" for the runs in recs
// that could not be measured, or "" when none failed.
func Failures(recs []Record) string {
	var failed []string
	for _, r := range recs {
		if r.Failed != "" {
			failed = append(failed, fmt.Sprintf("loss %g%% %s r%d", r.Cell.LossPct, r.Arm, r.Repeat))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d measurements failed (%s)", len(failed), len(recs), strings.Join(failed, ", "))
}

// names says whether rec is the record of rc's run: a record copied
// from another run's directory is not.
func (rc runConfig) names(rec Record) bool {
	return rec.Cell.Dir() == rc.Cell.Dir() && rec.Arm == string(rc.Arm) && rec.Repeat == rc.Repeat
}

// reanalyse recomputes one run's record from what its processes wrote,
// keeping the link's events from the record already there.
func reanalyse(rc runConfig) (Record, error) {
	dir := rc.dir()
	old, err := results.ReadExtra[Record](dir, recordFile)
	if err != nil {
		return Record{}, fmt.Errorf("no record to reanalyse: %w", err)
	}
	// Only the client spec's change is needed (the spec's type is the
	// Linux orchestrator's).
	var cspec struct {
		Change *Change `json:"change"`
	}
	if err := results.ReadJSON(filepath.Join(dir, "client-spec.json"), &cspec); err != nil || cspec.Change == nil {
		return Record{}, fmt.Errorf("%s: no client spec with a change (%v)", dir, err)
	}
	var cres, sres roleResult
	_ = results.ReadJSON(filepath.Join(dir, "client.json"), &cres)
	_ = results.ReadJSON(filepath.Join(dir, "server.json"), &sres)
	var link []Event
	for _, e := range old.Events {
		if e.Side == "link" {
			link = append(link, e)
		}
	}
	rec := analyse(rc.Cell, string(rc.Arm), rc.Repeat, *cspec.Change, cres, sres, link)
	rec.Failed = old.Failed
	return rec, results.WriteJSON(filepath.Join(dir, recordFile), rec)
}
