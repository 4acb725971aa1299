package singleflow

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// DefaultFlows are quic-go and kernel TCP with quicreno, reno and cubic.
func DefaultFlows() []measure.Arm {
	return []measure.Arm{measure.QUIC, "tcp-" + quicreno.Name, "tcp-reno", "tcp-cubic"}
}

// ParseFlows reads flows' names: "quic", or "tcp-" and a controller's
// name. Validate checks that the kernel has the controller.
func ParseFlows(names []string) ([]measure.Arm, error) {
	var out []measure.Arm
	for _, n := range names {
		a, err := measure.Lookup(n)
		if err != nil || checkFlow(a) != nil {
			return nil, fmt.Errorf("flow %q: give quic or tcp-<controller> (tcp-reno, tcp-cubic, tcp-bbr, tcp-%s)", n, quicreno.Name)
		}
		out = append(out, a)
	}
	return out, nil
}

// checkFlow says why a cannot be a flow: one is the quic arm, or the tcp
// arm with its controller pinned.
func checkFlow(a measure.Arm) error {
	if _, ok := a.PinnedCC(); ok || a == measure.QUIC {
		return nil
	}
	return fmt.Errorf("flow %q: the arm is not quic or tcp-<controller>", a)
}

// Config is a single-flow comparison: every flow over every profile and
// loss level, Repeats times, interleaved within each cell.
type Config struct {
	// Profiles are the links without loss, e.g. 80:10; Losses the loss
	// percentages applied to each direction of each.
	Profiles []shapedlink.Profile
	Losses   []float64
	// Flows are the senders: measure.QUIC, or tcp-<controller>.
	Flows []measure.Arm
	// Repeats per flow and cell (5 for a spread).
	Repeats int
	// Duration of each flow; goodput counts what arrived after Warmup.
	Duration, Warmup time.Duration
	// Link are the options every link is built with.
	Link shapedlink.Options
	// Controller is quicreno's settings when a flow uses it.
	Controller quicreno.Params
	// Skip, if set, is asked before each run, given a Result naming it
	// (Profile, Loss, Flow, Repeat); true leaves the run out, as one
	// already measured.
	Skip func(Result) bool `json:"-"`
	// StateDir, if set, receives each run's sender state (transport.State:
	// the TCP_INFO series or quic-go's window series) as
	// <profile>_<loss>_<flow>_r<N>.json.
	StateDir string
}

// Defaults returns the default comparison: 80:10 and 150:2 at 0, 1 and 2%
// loss, the default flows, 5 repeats of 20 s with 5 s of warm-up, and the
// emulator's default settings (shapedlink.DefaultKeepAwake, CPUs left to
// idle, and DefaultDepartureWindow).
func Defaults() Config {
	p1, _ := shapedlink.ParseProfile("80:10")
	p2, _ := shapedlink.ParseProfile("150:2")
	return Config{
		Profiles: []shapedlink.Profile{p1, p2}, Losses: []float64{0, 1, 2}, Flows: DefaultFlows(),
		Repeats: 5, Duration: 20 * time.Second, Warmup: 5 * time.Second,
		Link:       shapedlink.Options{EmulatorKeepAwake: shapedlink.DefaultKeepAwake, EmulatorDepartureWindow: shapedlink.DefaultDepartureWindow},
		Controller: quicreno.Defaults(),
	}
}

// Validate says what is wrong with c, all at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Profiles) == 0 {
		errs = append(errs, errors.New("no profiles: give at least one, e.g. 80:10"))
	}
	for _, l := range c.Losses {
		if l < 0 || l >= 100 {
			errs = append(errs, fmt.Errorf("loss %v%% is outside [0, 100)", l))
		}
	}
	if len(c.Losses) == 0 {
		errs = append(errs, errors.New("no loss levels: give at least one, e.g. 0 1 2"))
	}
	if len(c.Flows) == 0 {
		errs = append(errs, errors.New("no flows: give at least one, e.g. quic tcp-reno"))
	}
	for i, f := range c.Flows {
		if slices.Contains(c.Flows[:i], f) {
			errs = append(errs, fmt.Errorf("flow %q given twice", f))
		}
		if err := checkFlow(f); err != nil {
			errs = append(errs, err)
		}
		if cc, ok := f.PinnedCC(); ok && cc != quicreno.Name {
			if err := measure.CheckKernelCC(cc); err != nil {
				errs = append(errs, fmt.Errorf("flow %q: %w", f, err))
			}
		}
	}
	if c.Repeats < 1 || c.Repeats > 100 {
		errs = append(errs, fmt.Errorf("repeats %d is outside 1..100 (5 for a spread)", c.Repeats))
	}
	if c.Duration <= 0 || c.Warmup < 0 || c.Warmup >= c.Duration {
		errs = append(errs, fmt.Errorf("duration %v and warm-up %v: give a duration longer than the warm-up", c.Duration, c.Warmup))
	}
	if err := c.Controller.Validate(); err != nil && c.usesController() {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) usesController() bool {
	for _, f := range c.Flows {
		if cc, _ := f.PinnedCC(); cc == quicreno.Name {
			return true
		}
	}
	return false
}

// Result is one flow's run.
type Result struct {
	Profile string  `json:"profile"`
	Loss    float64 `json:"loss_pct"`
	Flow    string  `json:"flow"`
	Repeat  int     `json:"repeat"`
	// GoodputMbit is the bytes the receiver read after the warm-up, per
	// second.
	GoodputMbit float64 `json:"goodput_mbit"`
	// Backoffs are the sender's window after each loss episode divided by
	// its window before (tcp: TCP_INFO sampled every 5 ms, window at the
	// end of recovery over the window when recovery began; quic: quic-go's
	// qlog, the first window after entering recovery over the last before).
	Backoffs []float64 `json:"backoffs,omitempty"`
	// InitialWindow is the sender's first window, in full packets (tcp:
	// MSS; quic: the configured packet size).
	InitialWindow float64 `json:"initial_window_packets"`
	// FirstRTTBytes is what the receiver read in the first 0.9 RTT after
	// its first byte: the first flight, or what the link's rate let through
	// in that time (FirstRTTCapBytes) if less.
	FirstRTTBytes    int64  `json:"first_rtt_bytes"`
	FirstRTTCapBytes int64  `json:"first_rtt_cap_bytes"`
	Controller       string `json:"controller"`
	// StateFile is the sender state's file in Config.StateDir, if saved.
	StateFile string `json:"state_file,omitempty"`
	Error     string `json:"error,omitempty"`
	// Cross is each cross flow's account, for a profile with the cross
	// option.
	Cross []shapedlink.CrossReport `json:"cross,omitempty"`
}
