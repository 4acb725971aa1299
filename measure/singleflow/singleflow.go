package singleflow

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// Flow is one sender: an arm and, for tcp, the kernel controller it pins.
type Flow struct {
	// Name labels the flow in results, e.g. "tcp-reno".
	Name string `json:"name"`
	// Arm is transport.ArmTCP or transport.ArmQUIC.
	Arm transport.Arm `json:"arm"`
	// CC is the tcp arm's congestion control; empty for quic.
	CC string `json:"cc,omitempty"`
}

// DefaultFlows are quic-go and kernel TCP with quicreno, reno and cubic.
func DefaultFlows() []Flow {
	return []Flow{
		{Name: "quic", Arm: transport.ArmQUIC},
		{Name: "tcp-" + quicreno.Name, Arm: transport.ArmTCP, CC: quicreno.Name},
		{Name: "tcp-reno", Arm: transport.ArmTCP, CC: "reno"},
		{Name: "tcp-cubic", Arm: transport.ArmTCP, CC: "cubic"},
	}
}

// ParseFlows turns "quic tcp-reno tcp-quicreno" into flows: "quic", or
// "tcp-" and a kernel controller's name.
func ParseFlows(names []string) ([]Flow, error) {
	var out []Flow
	for _, n := range names {
		switch {
		case n == "quic":
			out = append(out, Flow{Name: n, Arm: transport.ArmQUIC})
		case len(n) > 4 && n[:4] == "tcp-":
			out = append(out, Flow{Name: n, Arm: transport.ArmTCP, CC: n[4:]})
		default:
			return nil, fmt.Errorf("flow %q: give quic or tcp-<controller> (tcp-reno, tcp-cubic, tcp-bbr, tcp-%s)", n, quicreno.Name)
		}
	}
	return out, nil
}

// Config is a single-flow comparison: every flow over every profile and
// loss level, Repeats times, interleaved within each cell.
type Config struct {
	// Profiles are the links without loss, e.g. 80:10; Losses the loss
	// percentages applied to each direction of each.
	Profiles []shapedlink.Profile
	Losses   []float64
	Flows    []Flow
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
	var names []string
	for _, f := range c.Flows {
		if slices.Contains(names, f.Name) {
			errs = append(errs, fmt.Errorf("flow %q given twice", f.Name))
		}
		names = append(names, f.Name)
		if f.Arm != transport.ArmTCP && f.Arm != transport.ArmQUIC {
			errs = append(errs, fmt.Errorf("flow %q: arm %q is not tcp or quic", f.Name, f.Arm))
		}
		if f.Arm == transport.ArmQUIC && f.CC != "" {
			errs = append(errs, fmt.Errorf("flow %q: quic-go's controller is fixed; leave CC empty", f.Name))
		}
		if f.Arm == transport.ArmTCP && f.CC != quicreno.Name {
			if err := measure.CheckKernelCC(f.CC); err != nil {
				errs = append(errs, fmt.Errorf("flow %q: %w", f.Name, err))
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
		if f.CC == quicreno.Name {
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
}
