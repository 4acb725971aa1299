package spicelive

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// checkNumbers says what is wrong with the settings beyond the lists;
// live is checkDisplay's.
func (c *Config) checkNumbers(live bool) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Repeats < 1 || c.Repeats > maxRepeats {
		bad("-repeats %d: want 1 to %d (a verdict needs 2)", c.Repeats, maxRepeats)
	}
	if c.Duration <= 0 || c.Warmup < 0 || c.Warmup >= c.Duration {
		bad("-duration %v, -warmup %v: want 0 <= warm-up < duration", c.Duration, c.Warmup)
	}
	if c.KeyInterval < 50*time.Millisecond || c.KeyInterval > c.Duration/2 {
		bad("-key-interval %v: want 50ms or more, and at least two keys in -duration", c.KeyInterval)
	}
	if c.BusyInterval < 10*time.Millisecond || c.BusyInterval > 10*time.Second {
		bad("-busy-interval %v: want 10ms to 10s", c.BusyInterval)
	}
	if c.Settle < 0 || c.Settle > 10*time.Minute {
		bad("-settle %v: want 0 to 10m", c.Settle)
	}
	if c.Workdir == "" {
		bad("-workdir is empty: name a results directory")
	}
	if c.Order != "" && c.Order != OrderRandom && c.Order != orderFixed {
		bad("-order %q: want random (the arms shuffled in each repeat) or fixed (as -arms lists them)", c.Order)
	}
	if c.OrderSeed != 0 && c.Order == orderFixed {
		bad("-order-seed %d shuffles the arms, and -order is fixed: leave one out", c.OrderSeed)
	}
	if c.NotSentLowat != 0 && (c.NotSentLowat < 1<<10 || c.NotSentLowat > 64<<20) {
		bad("-notsent-lowat %d: want 0 (the kernel's default) or 1024 to 67108864 bytes", c.NotSentLowat)
	}
	if c.SpiceRcvBuf != 0 && (c.SpiceRcvBuf < 4<<10 || c.SpiceRcvBuf > 64<<20) {
		bad("-spice-rcvbuf %d: want 0 (the kernel's default) or 4096 to 67108864 bytes", c.SpiceRcvBuf)
	}
	if _, err := shapedlink.ParseProfile(c.Reference); err != nil {
		bad("-reference: %v", err)
	}
	if c.Recording != "" && !slices.Contains(spicelike.Recordings(), c.Recording) {
		bad("-replay %q: want %s, or reference to record the session over -reference", c.Recording, strings.Join(append(spicelike.Recordings(), "reference"), ", "))
	}
	switch shapedlink.Backend(c.Backend) {
	case shapedlink.BackendAuto, shapedlink.BackendNetem, shapedlink.BackendEmulator:
	default:
		bad("-backend %q: want netem, emulator or empty", c.Backend)
	}
	if (c.KeepAwake || c.KeepAwakeAuto || c.DepartureWindow != 0) && shapedlink.Backend(c.Backend) == shapedlink.BackendNetem {
		bad("-keep-awake and -departure-window set the emulator, and -backend is netem: leave -keep-awake out and give -departure-window 0, or use the emulator")
	}
	if c.DepartureWindow < 0 || c.DepartureWindow > shapedlink.MaxDepartureWindow {
		bad("-departure-window %v: give 0 (each segment at its due time) up to %v", c.DepartureWindow, shapedlink.MaxDepartureWindow)
	}
	errs = append(errs, c.checkControllers()...)
	return append(errs, c.checkDisplay(live)...)
}

// checkArmSettings refuses arms carrying settings where they mean
// nothing: beside a reading other than live, or in the control.
func (c Config) checkArmSettings() []error {
	var errs []error
	for _, a := range c.Arms {
		if !strings.Contains(string(a), "+") {
			continue
		}
		if c.Control || slices.ContainsFunc(c.Readings, func(r string) bool { return r != ReadingLive }) {
			errs = append(errs, fmt.Errorf("-arms %s: an arm's settings are spice-server's and the tunnel's, so it runs in the live reading only: give -readings live", a))
		}
	}
	return errs
}

// checkControllers says why -cc or an arm's own controller (tcp-<cc>)
// could not run here: quicreno cannot be loaded, or the kernel does not
// list the controller.
func (c *Config) checkControllers() []error {
	var errs []error
	if c.CC != quicreno.Name {
		if err := measure.CheckKernelCC(c.CC); err != nil {
			errs = append(errs, fmt.Errorf("-cc: %w", err))
		}
	}
	for _, a := range c.Arms {
		if cc, ok := measure.Arm(transportArm(a)).PinnedCC(); ok && cc != quicreno.Name {
			if err := measure.CheckKernelCC(cc); err != nil {
				errs = append(errs, fmt.Errorf("-arms %s: %w", a, err))
			}
		}
	}
	if c.needsController() {
		errs = append(errs, quicreno.CheckLoad())
	}
	return errs
}
