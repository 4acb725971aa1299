package quicreno

import (
	"errors"
	"fmt"
	"strings"
)

// Name is the controller's name in the kernel: what TCP_CONGESTION, the
// matrix commands' -ccs and a run record's cell take.
const Name = "quicreno"

// Params are the controller's settings, fixed when it is loaded.
type Params struct {
	// InitialWindow is the window at the start of a connection, in
	// packets (quic-go: 32; kernel TCP: 10).
	InitialWindow uint32 `json:"initial_window"`
	// BetaPercent is the share of the window kept after a loss, in
	// percent (quic-go: 70; kernel reno: 50).
	BetaPercent uint32 `json:"beta_percent"`
	// MinWindow is the floor of the window after a loss, in packets
	// (quic-go: 2).
	MinWindow uint32 `json:"min_window"`
	// HyStart ends slow start when a round's lowest RTT rises past the
	// path's minimum by min(max(minRTT/8, 4 ms), 16 ms), as quic-go does.
	HyStart bool `json:"hystart"`
	// Pacing asks the kernel to pace the socket (SK_PACING_NEEDED) at its
	// own rates: cwnd/srtt times tcp_pacing_ss_ratio (200%) in slow start
	// and tcp_pacing_ca_ratio (120%) after.
	Pacing bool `json:"pacing"`
	// KeepOnRTO keeps the window at ssthresh (one cut by BetaPercent)
	// after a retransmission timeout instead of the kernel's one packet;
	// quic-go does not shrink its window on a probe timeout.
	KeepOnRTO bool `json:"keep_on_rto"`
	// Undo restores the window when the kernel finds a loss spurious, as
	// quic-go does.
	Undo bool `json:"undo"`
}

// Defaults returns quic-go v0.65's settings.
func Defaults() Params {
	return Params{InitialWindow: 32, BetaPercent: 70, MinWindow: 2, HyStart: true, Pacing: true, KeepOnRTO: true, Undo: true}
}

// Validate checks that p can be loaded.
func (p Params) Validate() error {
	var errs []error
	if p.InitialWindow < 1 || p.InitialWindow > 1000 {
		errs = append(errs, fmt.Errorf("initial window %d packets is outside 1..1000 (quic-go: 32)", p.InitialWindow))
	}
	if p.BetaPercent < 1 || p.BetaPercent > 99 {
		errs = append(errs, fmt.Errorf("beta %d%% is outside 1..99 (quic-go: 70, kernel reno: 50)", p.BetaPercent))
	}
	if p.MinWindow < 1 || p.MinWindow > 100 {
		errs = append(errs, fmt.Errorf("minimum window %d packets is outside 1..100 (quic-go: 2)", p.MinWindow))
	}
	if len(errs) > 0 {
		return fmt.Errorf("quicreno: %w", errors.Join(errs...))
	}
	return nil
}

// String gives p in one line, e.g.
// "iw=32 beta=0.70 min=2 hystart pacing keep-on-rto undo".
func (p Params) String() string {
	s := []string{fmt.Sprintf("iw=%d", p.InitialWindow), fmt.Sprintf("beta=%d.%02d", p.BetaPercent/100, p.BetaPercent%100),
		fmt.Sprintf("min=%d", p.MinWindow)}
	for _, f := range []struct {
		on   bool
		name string
	}{{p.HyStart, "hystart"}, {p.Pacing, "pacing"}, {p.KeepOnRTO, "keep-on-rto"}, {p.Undo, "undo"}} {
		if f.on {
			s = append(s, f.name)
		} else {
			s = append(s, "no-"+f.name)
		}
	}
	return strings.Join(s, " ")
}

// Needed reports whether names (a matrix's congestion controls) include
// this controller.
func Needed(names []string) bool {
	for _, n := range names {
		if n == Name {
			return true
		}
	}
	return false
}
