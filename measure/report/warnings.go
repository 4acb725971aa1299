package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

func warnings(rep *Report, runs []results.Run) []Warning {
	var ws []Warning
	for _, c := range rep.Cells {
		label := c.Label()
		add := func(arm, kind, detail string) {
			ws = append(ws, Warning{Cell: label, Dir: c.Dir, Arm: arm, Kind: kind, Detail: detail})
		}
		if c.Arm(ArmTCP) == nil {
			add("", kindNoCompare, warnNoTCP)
		}
		if len(c.Arms) == 1 && c.Arms[0].Arm == ArmTCP {
			add("", kindNoCompare, warnOnlyTCP)
		}
		for _, cp := range c.Comparisons {
			if cp.Error != "" {
				add(cp.B, kindNoCompare, fmt.Sprintf(warnNotCompared, cp.B, cp.A, cp.Error))
			}
		}
		if c.Sessions != nil {
			for _, a := range c.Sessions.Arms {
				if a.Timeouts > 0 {
					add(a.Arm, kindTimeout, fmt.Sprintf(warnSessionTimeouts, a.Timeouts, c.Sessions.Sessions))
				}
				if a.Error != "" {
					add(a.Arm, kindUnmeasured, "sessions: "+a.Error)
				}
			}
		}
		for _, a := range c.Arms {
			if a.Timeouts > 0 {
				var which []string
				for i, n := range a.TimeoutsPerRepeat {
					if n > 0 {
						which = append(which, fmt.Sprintf("%d in r%d", n, repeatNumber(runs, c.Dir, a.Arm, i)))
					}
				}
				add(a.Arm, kindTimeout, fmt.Sprintf(warnTimeouts, a.Timeouts, strings.Join(which, ", ")))
			}
			if a.Unmeasured > 0 {
				add(a.Arm, kindUnmeasured, fmt.Sprintf(warnUnmeasured, a.Unmeasured, a.Runs, strings.Join(a.Failures, "; ")))
			}
			if a.QUIC() {
				if missing, total := gsoMissing(runs, c.Dir, a.Arm); len(missing) > 0 {
					add(a.Arm, kindGSO, fmt.Sprintf(warnNoGSO,
						len(missing), total, strings.Join(missing, ", ")))
				}
				for _, g := range a.GSO {
					if g.Verdict != gsocheck.Off {
						d := fmt.Sprintf(warnGSOVerdict, g.Source, g.Verdict, g.On+g.Inconclusive, g.Runs, g.On, g.Inconclusive)
						if len(g.Reasons) > 0 {
							d += ": " + strings.Join(g.Reasons, "; ")
						}
						add(a.Arm, kindGSO, d)
					}
				}
				if n := quicGSOUsed(runs, c.Dir, a.Arm); n > 0 {
					add(a.Arm, kindGSO, fmt.Sprintf(warnQUICGSO, n))
				}
			}
			if d := shaperTrouble(runs, c.Dir, a.Arm); d != "" {
				add(a.Arm, kindShaper, d)
			}
			if want := expectedCC(c.Cell.CC, a.Arm, a.QUIC()); want != "" {
				for _, cc := range a.CongestionControl {
					// An entry is "role: controller" (or, in older
					// records, the controller alone).
					got := cc
					if _, after, ok := strings.Cut(cc, ": "); ok {
						got = after
					}
					if got != want {
						add(a.Arm, kindCC, fmt.Sprintf(warnCC, want, cc))
					}
				}
			}
		}
	}
	backends := map[string]bool{}
	var list []string
	for _, r := range runs {
		if !backends[r.Link.Backend] {
			backends[r.Link.Backend] = true
			list = append(list, fmt.Sprintf("%q", r.Link.Backend))
		}
	}
	if len(list) > 1 {
		ws = append(ws, Warning{Kind: kindBackend, Detail: fmt.Sprintf(warnBackends, strings.Join(list, ", "))})
	}
	if slices.ContainsFunc(runs, func(r results.Run) bool { return NetemKeptOffload(r.Link) }) {
		ws = append(ws, Warning{Kind: kindBackend, Detail: NetemKeepWarning})
	}
	return ws
}

// NetemKeptOffload reports whether a run's link kept segmentation offload
// (results.Link.Offload "keep") on netem, which judges a super-packet as
// one packet: kernel TCP's loss, limit and reordering were then per
// super-packet while QUIC's datagrams (sent without GSO) were judged one
// by one. On the emulator a kept offload changes no arm's semantics.
func NetemKeptOffload(l results.Link) bool {
	return keptOffload(l) && l.Backend == string(shapedlink.BackendNetem)
}

// keptOffload reports whether a run's link kept its ends' segmentation
// offload.
func keptOffload(l results.Link) bool { return l.Offload == string(shapedlink.OffloadKeep) }

// repeatNumber is the recorded Repeat of the i-th run (in repeat order) of
// an arm.
func repeatNumber(runs []results.Run, dir, arm string, i int) int {
	var reps []int
	for _, r := range runs {
		if r.Arm == arm && r.Cell.Dir() == dir {
			reps = append(reps, r.Repeat)
		}
	}
	slices.Sort(reps)
	if i < len(reps) {
		return reps[i]
	}
	return i + 1
}

// WithoutRealTime reports whether the emulator ran without real-time
// scheduling priority, so that its timing competed with the endpoints'.
func WithoutRealTime(sh shapedlink.ShaperReport) bool {
	return strings.HasPrefix(sh.Priority, "SCHED_OTHER")
}

// shaperTrouble describes the runs of an arm in a cell whose emulator
// counters say the host, not the link model, lost or delayed frames, or
// whose emulator ran without real-time priority; "" when there are none
// (or the runs predate the record, or used netem).
func shaperTrouble(runs []results.Run, dir, arm string) string {
	var parts []string
	for _, r := range runs {
		if r.Arm != arm || r.Cell.Dir() != dir || r.Link.Shaper == nil {
			continue
		}
		if why := r.Link.Shaper.Distorted(results.ShaperLateLimit); why != "" {
			parts = append(parts, fmt.Sprintf("r%d: %s", r.Repeat, why))
		}
		if WithoutRealTime(*r.Link.Shaper) {
			parts = append(parts, fmt.Sprintf(warnNoRealTime, r.Repeat, r.Link.Shaper.Priority))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return warnShaper + strings.Join(parts, "; ")
}

// expectedCC is the controller an arm's runs should have read back in a
// cell pinned to cellCC: a tcp-<controller> arm's own, the cell's for the
// other TCP arms, none for QUIC.
func expectedCC(cellCC, arm string, quic bool) string {
	if cc, ok := measure.Arm(arm).PinnedCC(); ok {
		return cc
	}
	if quic {
		return ""
	}
	return cellCC
}

// The details of warnings (Warning.Detail): formats where the comment names
// arguments, else plain text.
const (
	// warnNoTCP is for a cell with no tcp arm.
	warnNoTCP = "no tcp arm in this cell, so nothing to read the QUIC arms against"
	// warnOnlyTCP is for a cell with nothing but the tcp arm.
	warnOnlyTCP = "only the tcp arm was recorded in this cell"
	// warnNotCompared is for a pair of arms that could not be compared
	// (%s: arm B, arm A, why).
	warnNotCompared = "%s against %s: %s"
	// warnSessionTimeouts is for timeouts in any session of a
	// multi-session arm (%d: timeouts, sessions).
	warnSessionTimeouts = "%d interactive exchange(s) timed out across the %d sessions (per session in the sessions section)"
	// warnTimeouts is for timeouts in an arm (%d: timeouts; %s: how many in
	// which repeat).
	warnTimeouts = "%d interactive exchange(s) timed out (%s); a timeout ends the channel, so that repeat has fewer samples"
	// warnUnmeasured is for unmeasured repeats (%d: unmeasured, runs; %s:
	// the reasons).
	warnUnmeasured = "%d of %d repeats unmeasured: %s"
	// warnNoGSO is for runs with no offload evidence (%d: missing, runs;
	// %s: which).
	warnNoGSO = "no GSO evidence (neither queue samples nor egress counters) in %d of %d runs (%s), " +
		"so offload was not verified off there"
	// warnGSOVerdict is for offload evidence not saying off (%s: source,
	// verdict; %d: runs not off, runs, on, inconclusive).
	warnGSOVerdict = "GSO check from %s: %s in %d of %d runs (on %d, inconclusive %d)"
	// warnQUICGSO is for quic-go reporting GSO in use (%d: runs).
	warnQUICGSO = "quic-go reported GSO in use on a connection in %d run(s)"
	// warnCC is for a socket whose controller is not the one asked for
	// (%s: asked for; %q: reported).
	warnCC = "asked for %s but a socket reported %q"
	// warnBackends is for runs on more than one link backend (%s: the
	// backends, quoted).
	warnBackends = "runs used different link backends: %s; cells may not be comparable"
	// NetemKeepWarning is for runs whose link kept segmentation offload
	// on netem.
	NetemKeepWarning = "the link kept segmentation offload (-offload keep) on netem, which judges each of kernel TCP's " +
		"super-packets (up to 64 KiB) as one packet (one loss draw, one slot of the limit, reordered and duplicated whole) " +
		"while the QUIC arms' datagrams are judged one by one: the arms were not shaped alike; " +
		"-backend emulator judges every wire segment"
	// warnNoRealTime is one run's shaper without real-time priority (%d:
	// repeat; %s: the priority it had).
	warnNoRealTime = "r%d: the emulator ran without real-time priority (%s)"
	// warnShaper prefixes the runs whose shaper counters flag trouble.
	warnShaper = "the emulator's own counters flag "
)
