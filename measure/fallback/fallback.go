package fallback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Config is what one Run measures: every arm over every profile.
type Config struct {
	// Profiles are the links, each with its loss; each gets a fresh link
	// per arm.
	Profiles []shapedlink.Profile
	// Arms are armTCP, armFallbackOpen and armFallbackBlocked, in the
	// order they run for each profile.
	Arms []measure.Arm
	// Connects per profile and arm, made one after another.
	Connects int
	// Channels per session: TCP connections, or QUIC streams.
	Channels int
	// GiveUp is how long the fallback dialer waits for QUIC before it
	// dials TCP (transport.DefaultFallbackGiveUp is the dialer's own).
	GiveUp time.Duration
	// Gap is the pause between connects, so one connect's teardown does
	// not overlap the next.
	Gap time.Duration
	// Workdir is the results directory; a Run skips what it holds.
	Workdir string
	// Link is the options of every link (backend, seed, logger).
	Link shapedlink.Options
	// Logger receives warnings, such as an arm recorded as failed (nil:
	// slog.Default()).
	Logger *slog.Logger
	// Progress, if set, receives a line per profile and arm as it starts
	// or is skipped.
	Progress io.Writer
}

// validate says what is wrong with c, or nil.
func (c Config) validate() error {
	if len(c.Profiles) == 0 {
		return errors.New("fallback: no profiles: give at least one in Profiles")
	}
	for _, p := range c.Profiles {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	if len(c.Arms) == 0 {
		return fmt.Errorf("fallback: no arms: give at least one of %s", armList())
	}
	for _, a := range c.Arms {
		if !slices.Contains(Arms(), a) {
			return fmt.Errorf("fallback: unknown arm %q: want %s", a, armList())
		}
	}
	switch {
	case c.Connects < 1:
		return fmt.Errorf("fallback: Connects %d: want at least 1", c.Connects)
	case c.Channels < 1 || c.Channels > transport.MaxChannels:
		return fmt.Errorf("fallback: Channels %d: want 1..%d", c.Channels, transport.MaxChannels)
	case c.GiveUp <= 0:
		return fmt.Errorf("fallback: GiveUp %v: want a positive duration", c.GiveUp)
	case c.Gap < 0:
		return fmt.Errorf("fallback: Gap %v: want zero or more", c.Gap)
	case c.Workdir == "":
		return errors.New("fallback: Workdir is empty: name a results directory")
	}
	return nil
}

// Result is what one Run measured.
type Result struct {
	// Measured are the records this Run wrote, in run order, failed arms
	// included; Skipped counts the profiles and arms already recorded.
	// Load reads every record in the work directory.
	Measured []Record
	Skipped  int
}

// Run measures every profile and arm of c not yet recorded in c.Workdir,
// writing one Record per profile and arm (a failed arm is recorded with
// Failed set, and measured again by the next Run). A profile and arm
// recorded with other Connects, Channels or GiveUp is refused rather than
// mixed in. Building links needs privilege: call Prepare first.
func Run(ctx context.Context, c Config) (Result, error) {
	var res Result
	if err := c.validate(); err != nil {
		return res, err
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	plan := c.plan()
	for i, j := range plan {
		path := c.recordPath(j)
		prev, err := existing(path)
		if err != nil {
			return res, err
		}
		if prev != nil {
			if prev.Connects != c.Connects || prev.Channels != c.Channels || prev.GiveUp != c.GiveUp {
				return res, fmt.Errorf("%s was recorded with %d connects, %d channels, give-up %v, not %d, %d, %v: use another -workdir",
					path, prev.Connects, prev.Channels, prev.GiveUp, c.Connects, c.Channels, c.GiveUp)
			}
			if prev.Failed == "" {
				fmt.Fprintf(progress, "[%d/%d] %s %s: recorded, skipped\n", i+1, len(plan), j.profile, j.arm)
				res.Skipped++
				continue
			}
		}
		fmt.Fprintf(progress, "[%d/%d] %s %s: %d connects\n", i+1, len(plan), j.profile, j.arm, c.Connects)
		rec, err := runJob(ctx, c, j, log)
		if ctx.Err() != nil {
			return res, fmt.Errorf("interrupted during %s %s: %w", j.profile, j.arm, context.Cause(ctx))
		}
		if err != nil {
			return res, err
		}
		if rec.Failed != "" {
			log.Warn("arm failed; recorded as unmeasured", "profile", j.profile.String(), "arm", j.arm, "err", rec.Failed)
		}
		res.Measured = append(res.Measured, rec)
	}
	return res, nil
}

// job is one profile and arm.
type job struct {
	profile shapedlink.Profile
	arm     measure.Arm
}

func (c Config) plan() []job {
	var out []job
	for _, p := range c.Profiles {
		for _, a := range c.Arms {
			out = append(out, job{p, a})
		}
	}
	return out
}

func (c Config) dir(p shapedlink.Profile) string {
	return filepath.Join(c.Workdir, profileDirOf(p))
}

// profileDirOf names the directory of profile p's records.
func profileDirOf(p shapedlink.Profile) string {
	return profileDir(float64(p.RTT)/1e6, p.RateMbit, p.LossPct) + results.ProfileSuffix(p.WithLoss(0).String())
}

func (c Config) recordPath(j job) string {
	return filepath.Join(c.dir(j.profile), string(j.arm)+".json")
}

// Failures is "N of M measurements (connects) failed (which)" for recs,
// or "" when none failed. A measurement is one connect: every connect of
// an arm recorded as failed counts, and so does each connect that
// returned an error in an arm that was measured.
func Failures(recs []Record) string {
	failed, total := 0, 0
	var which []string
	for _, r := range recs {
		n := max(r.Connects, len(r.Results))
		total += n
		if r.Failed != "" {
			failed += n
			which = append(which, fmt.Sprintf("%s %s: arm failed", r.Profile, r.Arm))
			continue
		}
		bad := 0
		for _, c := range r.Results {
			if c.Err != "" {
				bad++
			}
		}
		// Connects the client never got to count as failed too.
		bad += max(0, r.Connects-len(r.Results))
		if bad > 0 {
			failed += bad
			which = append(which, fmt.Sprintf("%s %s: %d of %d connects", r.Profile, r.Arm, bad, n))
		}
	}
	if failed == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d measurements (connects) failed (%s)", failed, total, strings.Join(which, "; "))
}
