package spicelive

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// The three readings of a cell.
const (
	// ReadingLive is a real SPICE session through the tunnel.
	ReadingLive = "live"
	// ReadingReplay is spicelike playing the reference session's shape.
	ReadingReplay = "replay"
	// ReadingSynthetic is the headline's synthetic workload.
	ReadingSynthetic = "synthetic"
)

var allReadings = []string{ReadingLive, ReadingReplay, ReadingSynthetic}

// AllReadings lists the readings in the order a cell's runs take them.
func AllReadings() []string { return slices.Clone(allReadings) }

// Config is what one invocation measures. Its JSON form, less Workdir and
// SessionTimeout, is the work directory's SettingsFile: a work directory is
// resumed only with the same settings.
type Config struct {
	// Profiles are the cells' links, loss applied, in matrix order
	// (shapedlink's profile grammar, e.g. "80:10:1").
	Profiles []string `json:"profiles"`
	// Arms are the tunnel's arms: tcp, tcp-<controller>, quic,
	// quic-per-channel, tcp-mux, each optionally carrying settings
	// after a plus sign: "tcp-bbr+defer10+bounded".
	Arms []measure.Arm `json:"arms"`
	// Readings are ReadingLive, ReadingReplay and ReadingSynthetic, in the
	// order each cell's repeat runs them.
	Readings []string `json:"readings"`
	// Repeats is the number of runs per cell, arm and reading.
	Repeats int `json:"repeats"`
	// Order is the arms' order within each repeat: OrderRandom, shuffled
	// anew for each cell and repeat from OrderSeed, or "fixed", as
	// listed. Empty is the work directory's order (fixed for one made
	// before the choice existed), or random for a new one, with a seed
	// chosen then and recorded.
	Order     string `json:"order,omitempty"`
	OrderSeed uint64 `json:"order_seed,omitempty"`
	// Duration is each run's length (for a live run, the typing), of which
	// the first Warmup is left out of the figures.
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	// CC is the TCP congestion control of the tcp arm's connections.
	CC string `json:"cc"`
	// KeyInterval is the time between keys; a key not answered before
	// the next one is counted, not timed.
	KeyInterval time.Duration `json:"key_interval_ns"`
	// BusyInterval is the time between the busy xterm's lines.
	BusyInterval time.Duration `json:"busy_interval_ns"`
	// Settle is the wait after the session is up before typing.
	Settle time.Duration `json:"settle_ns"`
	// Reference is the link the replayed session is recorded over (tcp
	// arm, no loss).
	Reference string `json:"reference"`
	// Recording, when set, is the shipped recording the replay reading
	// plays (one of spicelike.Recordings) instead of a session recorded
	// over Reference in the work directory.
	Recording string `json:"recording,omitempty"`
	// Control, when set, makes this the control: live sessions on the tcp
	// arm over lossless links differing in their round trip, checked by
	// summary.Summarise. Arms must then be tcp alone and Readings live alone.
	Control bool `json:"control,omitempty"`
	// Backend is the link backend: netem, emulator, or empty to choose.
	Backend string `json:"backend,omitempty"`
	// Seed is the emulator's loss seed; 0 is random per run, recorded.
	Seed uint64 `json:"seed,omitempty"`
	// KeepAwake and DepartureWindow are the emulator's settings
	// (shapedlink.Options.EmulatorKeepAwake, EmulatorDepartureWindow),
	// unused by a netem link; each run's record has them as applied.
	KeepAwake       bool          `json:"keep_awake,omitempty"`
	DepartureWindow time.Duration `json:"departure_window_ns,omitempty"`
	// KeepAwakeAuto is Options.EmulatorKeepAwakeAuto: keep-awake decided
	// by probing the host, not recorded here but in each run's host state.
	KeepAwakeAuto bool `json:"-"`

	// Display is the display workload beside the typed-into xterm:
	// xsession.DisplayVideo, DisplayImages, or DisplayNone (empty). Its knobs are
	// the window's size in pixels, the video's FrameRate (frames a
	// second), the images' ImageInterval and KeyTimeout; they are zero
	// without a workload (SetDisplayFlags sets their defaults).
	Display       string        `json:"display,omitempty"`
	DisplayWidth  int           `json:"display_width,omitempty"`
	DisplayHeight int           `json:"display_height,omitempty"`
	FrameRate     int           `json:"frame_rate,omitempty"`
	ImageInterval time.Duration `json:"image_interval_ns,omitempty"`
	// KeyTimeout is, with a workload, how long a key may take to be
	// drawn: keys are attributed by glyph (keydraw.AnalyseGlyphs), a run waits
	// after its typing for its keys' answers up to KeyTimeout after the
	// last, and a key not answered within it counts at it.
	KeyTimeout time.Duration `json:"key_timeout_ns,omitempty"`

	// Workdir holds the runs, one results tree per reading (ReadingDir).
	Workdir string `json:"-"`
	// SessionTimeout bounds the wait for a live session to come up.
	SessionTimeout time.Duration `json:"-"`

	// Pixel, when set, also times each live run's keys to the first change
	// of the typing xterm's pixels in spicy's window (PixelAnalysis).
	Pixel bool `json:"pixel,omitempty"`

	// ServerOptions are spice-server settings, name=value, named as
	// Xspice's options (xsession.ServerOptionNames): "streaming-video=all".
	ServerOptions []string `json:"server_options,omitempty"`
	// NotSentLowat, when positive, is TCP_NOTSENT_LOWAT in bytes on the
	// carriers' TCP sockets (the TCP arms, both tunnel ends): how much
	// each lets wait unsent.
	NotSentLowat int `json:"notsent_lowat,omitempty"`
	// SpiceRcvBuf, when positive, is SO_RCVBUF in bytes of the tunnel's
	// connections to spice-server: how much of spice-server's output the
	// server end lets wait unread.
	SpiceRcvBuf int `json:"spice_rcvbuf,omitempty"`
}

// KeyGoal is the key goal the docs read live cells against: an arm meets
// it in a cell when its key-to-draw p95 (the median over repeats of each
// repeat's own p95, the figure the verdicts compare) is at most KeyGoal.
const KeyGoal = 300 * time.Millisecond

// maxRepeats bounds Config.Repeats.
const maxRepeats = 1000

// DefaultControlProfiles are the control's two links: the same fast,
// lossless link at two round trips 100 ms apart.
const DefaultControlProfiles = "10:100 110:100"

// parseLosses reads space-separated loss levels in percent, saying what
// is wrong with each one refused.
func parseLosses(losses string) ([]float64, error) {
	var ls []float64
	var errs []error
	for _, s := range strings.Fields(losses) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v < 100) {
			errs = append(errs, fmt.Errorf("loss %q: want a percentage in [0, 100), e.g. -losses \"0 1\"", s))
			continue
		}
		ls = append(ls, v)
	}
	return ls, errors.Join(errs...)
}

// parseArms reads space-separated arms, saying what is wrong with each
// one refused.
func parseArms(arms string) ([]measure.Arm, error) {
	var out []measure.Arm
	var errs []error
	for _, s := range strings.Fields(arms) {
		a := measure.Arm(s)
		_, _, err := splitArm(a)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("-arms: %w", err))
		case slices.Contains(out, a):
			errs = append(errs, fmt.Errorf("-arms names %s twice", a))
		default:
			out = append(out, a)
		}
	}
	return out, errors.Join(errs...)
}

// parseReadings reads space-separated readings, saying what is wrong
// with each one refused.
func parseReadings(readings string) ([]string, error) {
	var out []string
	var errs []error
	for _, r := range strings.Fields(readings) {
		switch {
		case !slices.Contains(allReadings, r):
			errs = append(errs, fmt.Errorf("-readings: %q is not a reading: want live, replay or synthetic", r))
		case slices.Contains(out, r):
			errs = append(errs, fmt.Errorf("-readings names %s twice", r))
		default:
			out = append(out, r)
		}
	}
	return out, errors.Join(errs...)
}

// SetLists sets Profiles (every profile at every loss level), Arms and
// Readings from their space-separated forms, and checks every setting,
// reporting every problem. The errors name the spicelive command's flags.
func (c *Config) SetLists(profiles, losses, arms, readings string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	ps, err := shapedlink.ParseProfiles(profiles)
	if err != nil {
		errs = append(errs, err)
	}
	ls, err := parseLosses(losses)
	errs = append(errs, err)
	if len(ps) == 0 || len(ls) == 0 {
		bad("no cells: give at least one profile and one loss level")
	}
	texts, perrs := profilesAt(ps, ls)
	c.Profiles = append(c.Profiles, texts...)
	errs = append(errs, perrs...)
	c.Arms, err = parseArms(arms)
	errs = append(errs, err)
	c.Readings, err = parseReadings(readings)
	errs = append(errs, err)
	if len(c.Arms) == 0 || len(c.Readings) == 0 {
		bad("no arms or no readings: give at least one of each")
	}
	errs = append(errs, c.checkArmSettings()...)
	errs = append(errs, c.checkNumbers(c.runsLive())...)
	return errors.Join(errs...)
}

// runsLive reports whether Run makes live sessions, in which keys are
// typed: for the live reading (the control's only one), and for the
// replay reading without a Recording, which records its session live
// over Reference.
func (c Config) runsLive() bool {
	return slices.Contains(c.Readings, ReadingLive) || slices.Contains(c.Readings, ReadingReplay) && c.Recording == ""
}

// Validate checks every setting, reporting every problem: what Run
// refuses. The errors name the spicelive command's flags, which are
// named as the fields are. With a display workload, the run's length
// against KeyTimeout and the number of keys it types are checked when
// it makes live sessions (the live reading, or the replay reading with
// no Recording), the only ones that type keys.
func (c Config) Validate() error { return c.validate(c.runsLive()) }

// controller is what a record says of the tcp arm's controller: quicreno
// with its settings, or nothing for the kernel's own.
func (c Config) controller() string {
	if !c.needsController() {
		return ""
	}
	return quicreno.Name + " " + quicreno.Defaults().String()
}

// needsController reports whether the tcp arm or an arm of its own
// (tcp-quicreno) runs quicreno.
func (c Config) needsController() bool {
	if c.CC == quicreno.Name {
		return true
	}
	for _, a := range c.Arms {
		if cc, ok := measure.Arm(transportArm(a)).PinnedCC(); ok && cc == quicreno.Name {
			return true
		}
	}
	return false
}

// armController is what arm's record says of its controller.
func (c Config) armController(arm measure.Arm) string {
	arm = transportArm(arm)
	cc := ""
	switch pinned, ok := arm.PinnedCC(); {
	case ok:
		cc = pinned
	case arm == measure.TCP || arm == measure.TCPMux:
		cc = c.CC
	}
	if cc != quicreno.Name {
		return ""
	}
	return c.controller()
}

// validate is Validate, checking the typed keys' timing and count when
// live (the run makes live sessions).
func (c Config) validate(live bool) error {
	var errs []error
	for _, p := range c.Profiles {
		q, err := shapedlink.ParseProfile(p)
		if err == nil {
			err = q.Validate()
		}
		errs = append(errs, err)
	}
	arms := make([]string, len(c.Arms))
	for i, a := range c.Arms {
		arms[i] = string(a)
	}
	_, err := parseArms(strings.Join(arms, " "))
	errs = append(errs, err)
	_, err = parseReadings(strings.Join(c.Readings, " "))
	errs = append(errs, err)
	if len(c.Profiles) == 0 || len(c.Arms) == 0 || len(c.Readings) == 0 {
		errs = append(errs, errors.New("no cells, arms or readings: give at least one of each"))
	}
	if c.Control && (!slices.Equal(c.Arms, []measure.Arm{measure.TCP}) || !slices.Equal(c.Readings, []string{ReadingLive})) {
		errs = append(errs, errors.New("the control runs live sessions on the tcp arm: give Arms tcp and Readings live alone"))
	}
	if c.SessionTimeout <= 0 {
		errs = append(errs, fmt.Errorf("SessionTimeout %v: want a positive wait for the session to come up (the command waits a minute)", c.SessionTimeout))
	}
	_, err = xsession.ParseServerOptions(strings.Join(c.ServerOptions, " "))
	errs = append(errs, err)
	errs = append(errs, c.checkArmSettings()...)
	errs = append(errs, c.checkNumbers(live)...)
	return errors.Join(errs...)
}

// linkOptions are the options every link of the plan is built with.
func (c Config) linkOptions(log *slog.Logger) shapedlink.Options {
	return shapedlink.Options{Backend: shapedlink.Backend(c.Backend), Seed: c.Seed, Logger: log,
		EmulatorKeepAwake: c.KeepAwake, EmulatorKeepAwakeAuto: c.KeepAwakeAuto, EmulatorDepartureWindow: c.DepartureWindow}
}

// The arms' orders within a repeat (Config.Order).
const (
	OrderRandom = "random"
	orderFixed  = "fixed"
)

// Job is one run of the plan.
type Job struct {
	// Profile is the cell's link, loss applied.
	Profile string
	Arm     measure.Arm
	// Reading is ReadingLive, ReadingReplay or ReadingSynthetic.
	Reading string
	// Repeat counts from 1.
	Repeat int
	// Position is the arm's place in its repeat's order, from 1.
	Position int
}

// Plan is every run, interleaved: for each cell and repeat, every arm and
// reading in turn, so that what the machine does over time falls on all
// of them alike; with OrderRandom the arms' order is shuffled anew for
// each cell and repeat, so that a drift within a sitting falls on no arm
// more than another.
func (c Config) Plan() []Job {
	var out []Job
	for pi, p := range c.Profiles {
		for r := 1; r <= c.Repeats; r++ {
			for i, a := range c.armOrder(pi, r) {
				for _, rd := range c.Readings {
					out = append(out, Job{Profile: p, Arm: a, Reading: rd, Repeat: r, Position: i + 1})
				}
			}
		}
	}
	return out
}

// armOrder is the arms' order in repeat r of the profile at index pi.
func (c Config) armOrder(pi, r int) []measure.Arm {
	arms := slices.Clone(c.Arms)
	if c.Order != OrderRandom {
		return arms
	}
	rng := rand.New(rand.NewPCG(c.OrderSeed, uint64(pi)<<32|uint64(r)))
	rng.Shuffle(len(arms), func(i, j int) { arms[i], arms[j] = arms[j], arms[i] })
	return arms
}

// cell is the results cell of a profile.
func (c Config) cell(profile string) (results.Cell, shapedlink.Profile, error) {
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		return results.Cell{}, p, err
	}
	cell := results.Cell{Profile: p.WithLoss(0).String(), RTTms: float64(p.RoundTrip()) / float64(time.Millisecond), RateMbit: p.RateMbit,
		LossPct: p.LossPct, CC: c.CC, Sensitivity: !plan.Matched(c.CC)}
	if own, loss := plan.OwnLoss(p); own {
		cell.Profile, cell.LossPct = p.String(), loss
	}
	return cell, p, nil
}

// ReadingDir is where a reading's runs live: one results tree per reading
// under Workdir (the control's live runs have their own, "control").
func (c Config) ReadingDir(reading string) string {
	if c.Control {
		return filepath.Join(c.Workdir, "control")
	}
	return filepath.Join(c.Workdir, reading)
}

// referenceDir holds the recording the replay reading plays.
func (c Config) referenceDir() string { return filepath.Join(c.Workdir, "reference") }

// ErrWorkdir says the work directory was refused: locked by another run,
// made with other settings, or its settings unreadable.
var ErrWorkdir = errors.New("work directory refused")

// LoadConfig reads the settings a work directory was made with, with
// Workdir set to it.
func LoadConfig(workdir string) (Config, error) {
	var c Config
	if err := results.ReadJSON(filepath.Join(workdir, SettingsFile), &c); err != nil {
		return Config{}, err
	}
	c.Workdir = workdir
	return c, nil
}

// orNone is a setting's JSON, or none when it is left out.
func orNone(v json.RawMessage) string {
	if v == nil {
		return "none"
	}
	return string(v)
}

// diffSettings names the settings in which two configurations differ.
func diffSettings(had, want Config) string {
	a, _ := json.Marshal(had)
	b, _ := json.Marshal(want)
	var ma, mb map[string]json.RawMessage
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	var diffs []string
	for k, v := range mb {
		if string(ma[k]) != string(v) {
			diffs = append(diffs, fmt.Sprintf("%s: %s there, %s asked", k, orNone(ma[k]), orNone(v)))
		}
	}
	for k, v := range ma {
		if _, ok := mb[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s there, none asked", k, v))
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}

// CheckPrograms says which programs c needs are absent here, with the
// packages to install, or returns nil when none is: those of a live
// session when c runs one (live readings, a replay of its own reference,
// or recording, as -record does), and the display workload's.
func (c Config) CheckPrograms(recording bool) error {
	if !recording && !slices.Contains(c.Readings, ReadingLive) && !(slices.Contains(c.Readings, ReadingReplay) && c.Recording == "") {
		return nil
	}
	if miss := xsession.MissingPrograms(); miss != "" {
		return fmt.Errorf("a live session cannot run here: %s", miss)
	}
	if miss := xsession.DisplayMissing(); miss != "" && c.Display != xsession.DisplayNone {
		return fmt.Errorf("the display workload cannot run here: %s", miss)
	}
	return nil
}

// profilesAt is every profile at every loss level, as text; a profile
// with a loss model of its own runs once, as given, and one with loss in
// its short form is refused.
func profilesAt(ps []shapedlink.Profile, losses []float64) ([]string, []error) {
	var out []string
	var errs []error
	for _, p := range ps {
		if own, _ := plan.OwnLoss(p); own {
			out = append(out, p.String())
			continue
		}
		if p.HasLoss() {
			errs = append(errs, fmt.Errorf("profile %s carries its own loss: give loss levels with -losses", p))
			continue
		}
		for _, l := range losses {
			q := p.WithLoss(l)
			if err := q.Validate(); err != nil {
				errs = append(errs, err)
			}
			out = append(out, q.String())
		}
	}
	return out, errs
}
