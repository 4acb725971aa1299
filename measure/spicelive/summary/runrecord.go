package summary

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
)

// Thresholds past which the summary flags a live run as taken on a host
// that may have distorted it.
const (
	// busyHostShare is the share of the host's CPU time, over the run,
	// spent working: above it the session's programs, the tunnel and the
	// emulator competed for CPUs.
	busyHostShare = 0.95
	// stolenShare is the share of the host's CPU time stolen by a
	// hypervisor.
	stolenShare = 0.05
)

// recordHeader are runs.csv's columns of how each run ran
// (runRecordColumns).
var recordHeader = []string{"started_utc", "position", "late_p99_ms_s2c", "late_max_ms_s2c", "late_p99_ms_c2s", "late_max_ms_c2s", "cpu_busy", "cpu_steal", "censored"}

// runFlags says why a live run's host or link may have distorted it: the
// emulator's p99 lateness past results.ShaperLateLimit either way, or the
// host's CPU past busyHostShare or stolenShare; "" when neither.
func runFlags(run results.Run, rec *spicelive.LiveRecord) string {
	var why []string
	if sh := run.Link.Shaper; sh != nil {
		for _, d := range sh.Directions {
			if d.LateP99Ms > float64(results.ShaperLateLimit)/float64(time.Millisecond) {
				why = append(why, fmt.Sprintf("the emulator late by %.2f ms at p99 (%s)", d.LateP99Ms, d.Direction))
			}
		}
	}
	if rec != nil && rec.HostCPU != nil {
		if rec.HostCPU.Busy > busyHostShare {
			why = append(why, fmt.Sprintf("the host's CPUs %.0f%% busy", 100*rec.HostCPU.Busy))
		}
		if rec.HostCPU.Steal > stolenShare {
			why = append(why, fmt.Sprintf("%.0f%% of CPU time stolen", 100*rec.HostCPU.Steal))
		}
	}
	return strings.Join(why, "; ")
}

// orderIntro says how the arms were ordered within each repeat.
func orderIntro(w io.Writer, c spicelive.Config) {
	switch {
	case len(c.Arms) < 2:
	case c.Order == spicelive.OrderRandom:
		fmt.Fprintf(w, "The arms ran in a random order in each repeat (seed %d, -order-seed %d repeats it); each run's place is in the table of how it ran.\n\n", c.OrderSeed, c.OrderSeed)
	default:
		fmt.Fprintf(w, "The arms ran in the same order in every repeat (%s), so a drift within the sitting falls on them unevenly.\n\n", armList(c.Arms))
	}
}

func armList(arms []measure.Arm) string {
	s := make([]string, len(arms))
	for i, a := range arms {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// runRecordTable lists, per live run, when it started, its place in its
// repeat, the emulator's lateness each way, the host's CPU and its keys
// counted at the timeout, flagging runs past the thresholds. Runs without
// a live.json are left out; with none left, so is the table.
func runRecordTable(w io.Writer, c spicelive.Config, byReading map[string]map[measure.Arm]*series) {
	var rows []string
	flagged := 0
	eachLiveRun(c, byReading, func(arm measure.Arm, run liveRun) {
		if run.Err != nil {
			return
		}
		rec := run.Rec
		late := map[string]string{}
		if sh := run.Link.Shaper; sh != nil {
			for _, d := range sh.Directions {
				late[d.Direction] = fmt.Sprintf("%.2f / %.2f", d.LateP99Ms, d.LateMaxMs)
			}
		}
		cpu := "-"
		if u := rec.HostCPU; u != nil {
			cpu = fmt.Sprintf("%.0f%% / %.1f%%", 100*u.Busy, 100*u.Steal)
		}
		pos := "-"
		if rec.Position > 0 {
			pos = fmt.Sprint(rec.Position)
		}
		flag := runFlags(run.Run, &rec)
		if flag != "" {
			flagged++
		}
		rows = append(rows, fmt.Sprintf("| %s | r%d | %s | %s | %s | %s | %s | %d | %s |", arm, run.Repeat, run.Started.UTC().Format("2006-01-02 15:04:05"), pos,
			orDash(late["server->client"]), orDash(late["client->server"]), cpu, len(rec.Analysis.Censored), flag))
	})
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "How each live run ran: its start (UTC), its place in its repeat's order, the emulator's lateness p99 / max each way (ms), "+
		"the host's CPU busy / stolen over the run, and its keys not answered within %v, counted at it. "+
		"A run is flagged where the emulator was late by more than %v at p99 or the host's CPUs were more than %.0f%% busy or %.0f%% stolen (%d flagged):\n\n",
		c.KeyTimeout, results.ShaperLateLimit, 100*busyHostShare, 100*stolenShare, flagged)
	fmt.Fprintln(w, "| arm | repeat | started | place | late server->client | late client->server | CPU busy / stolen | at the timeout | flag |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	fmt.Fprintln(w, strings.Join(rows, "\n"))
	fmt.Fprintln(w)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
