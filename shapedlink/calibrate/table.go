package calibrate

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// mark is a target's verdict in the table.
func mark(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

// ms writes a figure in milliseconds to the microsecond.
func ms(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// printTable prints rep for a reader: the applied lines, the idle round
// trip table, the rate and loss table, each profile's notes, then the
// sweep, iperf3 and queue discipline tables, the UDP_SEGMENT loss and
// the quic-go transfer, each only when measured. The first line names
// the offload mode every link was built in, whether the CPUs were kept
// awake, and the departure window.
func printTable(w io.Writer, rep Report) {
	awake := ""
	if rep.KeepAwake {
		awake = ", CPUs kept awake beside every link (SCHED_IDLE busy loops; not beside the bare pairs)"
	}
	if p := rep.WakeProbe; p != nil {
		awake = ", " + WakeProbeLine(*p) + " beside every link"
	}
	if rep.DepartureWindowUs > 0 {
		awake += fmt.Sprintf(", departure window %d us on every link", rep.DepartureWindowUs)
	}
	fmt.Fprintf(w, "calibrate %s on %s, load %s, offload %s%s\n", rep.Started.Format(time.RFC3339), rep.Host, rep.Load, modeOf(rep.Offload), awake)
	printApplied(w, rep.Results)
	if len(rep.Results) > 0 {
		fmt.Fprintln(w)
		printIdle(w, rep.Results)
		printNoise(w, rep.Results)
		printLateTraces(w, rep.Results)
		fmt.Fprintln(w)
		printRateAndLoss(w, rep.Results)
	}
	for _, r := range rep.Results {
		printNotes(w, r)
	}
	printSweep(w, rep.Sweep, rep.HighestOKMbit)
	printIperf(w, rep.Iperf)
	printQdisc(w, rep.Qdisc)
	printGSOLoss(w, rep.GSOLoss)
	printQUICGSO(w, rep.QUICGSO)
}

// printApplied lists what each profile's link applied, and the
// emulator's scheduling where it has one.
func printApplied(w io.Writer, rs []Result) {
	for _, r := range rs {
		for _, a := range r.Applied {
			fmt.Fprintf(w, "  %s: %s\n", r.Profile, a)
		}
		if r.Priority != "" {
			fmt.Fprintf(w, "  %s: emulator priority %s\n", r.Profile, r.Priority)
		}
	}
}

// printIdle is the idle round trip table: the ICMP probe's errors
// against the targets, the bare pair's and the excess over it, the
// shaper's lateness, the UDP echo's errors and the loopback echo.
func printIdle(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "idle round trip\tbackend\texpected ms\tp50 err ms\t\tp99 err ms\t\tbare p50/p99\texcess p50/p99\tshaper late p50/p99\tudp echo p50/p99 err\tloopback p50/p99\t")
	for _, r := range rs {
		if r.Error != "" && r.Answered == 0 && (r.Ping == nil || r.Ping.Answered == 0) {
			fmt.Fprintf(tw, "%s\t%s\terror: %s\t\n", r.Profile, r.Backend, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t", r.Profile, r.Backend)
		idleProbeCells(tw, r)
		if r.ShaperLateP99Ms > 0 || r.ShaperLateP50Ms > 0 {
			fmt.Fprintf(tw, "%.3f/%.3f\t", r.ShaperLateP50Ms, r.ShaperLateP99Ms)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		if r.Answered > 0 {
			fmt.Fprintf(tw, "%+.3f/%+.3f\t", r.RTTP50ErrMs, r.RTTP99ErrMs)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		fmt.Fprintf(tw, "%.3f/%.3f\t\n", r.BaselineP50Ms, r.BaselineP99Ms)
	}
	tw.Flush()
}

// idleProbeCells writes the idle table's ICMP cells for r: expected,
// p50 and p99 error with their verdicts, the bare pair's errors and the
// link's excess over them.
func idleProbeCells(tw io.Writer, r Result) {
	if pg := r.Ping; pg != nil && pg.Answered > 0 {
		m50, m99 := mark(pg.P50ErrMs <= 0.1 && pg.P50ErrMs >= -0.1), mark(pg.P99ErrMs <= 0.5 && pg.P99ErrMs >= -0.5)
		if r.varies() {
			// The targets are for a fixed delay and rate.
			m50, m99 = "n/a", "n/a"
		}
		fmt.Fprintf(tw, "%s\t%+.3f\t%s\t%+.3f\t%s\t", ms(pg.ExpectedMs), pg.P50ErrMs, m50, pg.P99ErrMs, m99)
	} else {
		fmt.Fprintf(tw, "-\t-\t\t-\t\t")
	}
	if b, pg := r.Bare, r.Ping; b != nil && b.Answered > 0 {
		fmt.Fprintf(tw, "%.3f/%.3f\t", b.P50ErrMs, b.P99ErrMs)
		if pg != nil && pg.Answered > 0 {
			fmt.Fprintf(tw, "%+.3f/%+.3f\t", pg.P50ErrMs-b.P50ErrMs, pg.P99ErrMs-b.P99ErrMs)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
	} else {
		fmt.Fprintf(tw, "-\t-\t")
	}
}

// printRateAndLoss is the rate and loss table: each bulk flow's goodput
// and wire share against the rate, the loss run's share with its
// interval, its bursts, and the emulator's CPU per packet.
func printRateAndLoss(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate and loss\tbbr goodput\twire\t\tcubic goodput\twire\t\tloss % [95% CI]\t\tburst/configured\tcpu/pkt\t")
	for _, r := range rs {
		if r.TimeVarying != nil {
			fmt.Fprintf(tw, "%s\tskipped: the link varies (see below)\t\n", r.Profile)
			continue
		}
		if r.Error != "" && len(r.Bulk) == 0 {
			fmt.Fprintf(tw, "%s\terror: %s\t\n", r.Profile, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t", r.Profile)
		for _, b := range r.Bulk {
			if b.Error != "" {
				fmt.Fprintf(tw, "error\t\t\t")
				continue
			}
			verdict := mark(b.WirePct >= 95)
			if r.lossy() {
				verdict = "n/a" // TCP's response to random loss, not the link's capacity
			}
			fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t%s\t", b.GoodputPct, b.WirePct, verdict)
		}
		fmt.Fprintf(tw, "%.2f [%.2f,%.2f]\t%s\t", r.LossPct, r.LossLoPct, r.LossHiPct, mark(r.LossInside))
		if r.LossMeanBurst > 0 {
			fmt.Fprintf(tw, "%.2f/%.2f\t", r.LossMeanBurst, r.LossBurstWant)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		if r.CPUPerPacketNs > 0 {
			fmt.Fprintf(tw, "%.2fus\t", r.CPUPerPacketNs/1000)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// printNotes is one profile's lines below the tables: its error, the
// duplication, time-varying, jitter and reordering figures it has, and
// each failed or unusual part.
func printNotes(w io.Writer, r Result) {
	if r.Error != "" {
		fmt.Fprintf(w, "%s: %s\n", r.Profile, r.Error)
	}
	if r.DupWantPct > 0 {
		fmt.Fprintf(w, "%s: duplicated %.2f%% [%.2f,%.2f] of the loss run's datagrams, configured %g%%: %s\n", r.Profile, r.DupPct, r.DupLoPct, r.DupHiPct, r.DupWantPct, mark(r.DupWantPct >= r.DupLoPct && r.DupWantPct <= r.DupHiPct))
	}
	if tv := r.TimeVarying; tv != nil {
		printTimeVarying(w, r.Profile, tv)
	}
	if j := r.Jitter; j != nil && j.Probes > 0 {
		printJitter(w, r.Profile, j)
	}
	if r.CorruptWantPct > 0 {
		fmt.Fprintf(w, "%s: the receiver's checks dropped %.2f%% [%.2f,%.2f] of the loss run's datagrams as corrupted, expected %.3g%%: %s; %d arrived changed\n", r.Profile, r.CorruptCaughtPct, r.CorruptCaughtLoPct, r.CorruptCaughtHiPct, r.CorruptWantPct, mark(r.CorruptWantPct >= r.CorruptCaughtLoPct && r.CorruptWantPct <= r.CorruptCaughtHiPct && r.CorruptArrived == 0), r.CorruptArrived)
	}
	if r.ReorderWantPct > 0 {
		fmt.Fprintf(w, "%s: sent early %.2f%% [%.2f,%.2f], configured %.3g%%: %s\n", r.Profile, r.ReorderPct, r.ReorderLoPct, r.ReorderHiPct, r.ReorderWantPct, mark(r.ReorderWantPct >= r.ReorderLoPct && r.ReorderWantPct <= r.ReorderHiPct))
	}
	for _, pr := range []struct {
		what string
		p    *Probe
	}{{"ping", r.Ping}, {"bare ping", r.Bare}} {
		if pr.p != nil && pr.p.Error != "" {
			fmt.Fprintf(w, "%s %s: %s\n", r.Profile, pr.what, pr.p.Error)
		}
	}
	for _, b := range r.Bulk {
		if b.Error != "" {
			fmt.Fprintf(w, "%s %s: %s\n", r.Profile, b.CC, b.Error)
		} else if b.unusualBuffers() {
			fmt.Fprintf(w, "%s %s: buffers %s\n", r.Profile, b.CC, b.Buffers)
		}
	}
}

// printTimeVarying is a varying link's lines: the trace's delivery, the
// blackouts' edges against the schedule, and how promptly its changes
// were applied.
func printTimeVarying(w io.Writer, profile string, tv *TimeVarying) {
	if tv.Error != "" {
		fmt.Fprintf(w, "%s: trace and schedule: %s\n", profile, tv.Error)
	}
	if tv.TraceWindows > 0 {
		fmt.Fprintf(w, "%s: trace: %.2f%% of what its opportunities carry delivered over %d s, worst second off by %.1f frames\n", profile, tv.TraceDeliveredPct, tv.TraceWindows, tv.TraceMaxErrFrames)
	}
	if tv.Blackouts > 0 {
		fmt.Fprintf(w, "%s: %d blackouts, edges (first lost, first back) against the schedule:", profile, tv.Blackouts)
		for _, e := range tv.EdgeErrMs {
			fmt.Fprintf(w, " %+.1f", e)
		}
		fmt.Fprintln(w, " ms")
	}
	switch {
	case tv.MaxAckLagMs > 0:
		fmt.Fprintf(w, "%s: %d scheduled changes applied, netem acknowledging each within %.1f ms of its time\n", profile, tv.Changes, tv.MaxAckLagMs)
	case tv.Changes > 0:
		fmt.Fprintf(w, "%s: %d scheduled changes applied, the emulator getting to each within %.2f ms of its time (it applies them at their time to the frames' arrival stamps)\n", profile, tv.Changes, tv.ShaperMaxLagMs)
	}
}

// printJitter is a jittered link's line: the KS distance against its
// critical value and the measured quantiles beside the configured.
func printJitter(w io.Writer, profile string, j *JitterFit) {
	fmt.Fprintf(w, "%s: jitter of %d probes %.0f ms apart, KS distance %.3f (5%% critical %.3f): %s; quantiles", profile, j.Probes, j.GapMs, j.KS, j.KSCrit, mark(j.Fits))
	for i, lv := range j.Levels {
		fmt.Fprintf(w, " p%g %+.2f/%+.2f", 100*lv, j.Meas[i], j.Want[i])
	}
	fmt.Fprintln(w, " ms (measured/configured)")
}

// printSweep is the highest-rate search: each rate's failed or unusual
// flows, then its table and the highest rate within 5% of configured.
func printSweep(w io.Writer, ss []Sweep, highestOK float64) {
	for _, s := range ss {
		for _, b := range []Bulk{s.Bulk, s.Cubic} {
			if b.Error != "" {
				fmt.Fprintf(w, "sweep %g Mbit/s %s: %s\n", s.RateMbit, b.CC, b.Error)
			} else if b.unusualBuffers() {
				fmt.Fprintf(w, "sweep %g Mbit/s %s: buffers %s\n", s.RateMbit, b.CC, b.Buffers)
			}
		}
	}
	if len(ss) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sweep at 5 ms RTT\tbbr Mbit/s\twire\t\tcubic Mbit/s\twire\t\tcpu/pkt\t")
	for _, s := range ss {
		if s.Error != "" {
			fmt.Fprintf(tw, "%g Mbit/s\terror: %s\t\n", s.RateMbit, s.Error)
			continue
		}
		fmt.Fprintf(tw, "%g Mbit/s\t", s.RateMbit)
		for _, b := range []Bulk{s.Bulk, s.Cubic} {
			if b.Error != "" {
				fmt.Fprintf(tw, "error\t\t\t")
				continue
			}
			fmt.Fprintf(tw, "%.1f\t%.1f%%\t%s\t", b.GoodputMbit, b.WirePct, mark(b.WirePct >= 95))
		}
		fmt.Fprintf(tw, "%.2fus\t\n", s.CPUNs/1000)
	}
	tw.Flush()
	fmt.Fprintf(w, "highest rate with wire utilisation within 5%% of configured: %g Mbit/s\n", highestOK)
}

// printQdisc is the queue discipline table: the flow's goodput, the
// standing queue it keeps, and what a sparse flow beside it waits.
func printQdisc(w io.Writer, qs []Qdisc) {
	if len(qs) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "qdisc\tprofile\tflow Mbit/s\tstanding p50\tp95\tsparse +p50\t+p95\techoes\tdrops (limit/queue/codel)\tmarks\t")
	for _, q := range qs {
		if q.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\terror\t\n", q.Discipline, q.Profile)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%d/%d\t%d/%d/%d\t%d\t\n", q.Discipline, q.Profile, q.FlowMbit,
			ms(q.StandingP50Ms), ms(q.StandingP95Ms), ms(q.SparseP50Ms), ms(q.SparseP95Ms), q.Echoes, q.EchoesSent,
			q.LimitDrops, q.QueueDrops, q.CoDelDrops, q.ECNMarks)
	}
	tw.Flush()
	for _, q := range qs {
		if q.Error != "" {
			fmt.Fprintf(w, "qdisc %s: %s\n", q.Discipline, q.Error)
		}
	}
	fmt.Fprintln(w, "standing: the wait for the rate at the down queue, from the shaper's held bytes every 10 ms; sparse: echoes 10 ms apart beside the flow, round trip beyond the configured one; ms")
}

// printNoise is the noisy-host table, when the run had a background load
// (Config.Noise): per profile and condition (quiet, or noisy with the
// load running), the link's idle round-trip error, the bare pair's p99
// beside it, the emulator's lateness and its garbage collection.
func printNoise(w io.Writer, rs []Result) {
	var loaded bool
	for _, r := range rs {
		loaded = loaded || r.Noise != "" || r.Noisy != nil
	}
	if !loaded {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "noisy host\tcondition\tp50 err ms\tp99 err ms\tbare p99 err ms\tshaper late p50/p99/max ms\tshaper gc cycles\tgc pause max ms\t")
	row := func(profile, cond string, in Idle) {
		fmt.Fprintf(tw, "%s\t%s\t", profile, cond)
		if in.Error != "" {
			fmt.Fprintf(tw, "-\t-\t-\t-\t-\t-\t  error: %s\n", in.Error)
			return
		}
		if p := in.Ping; p != nil && p.Answered > 0 {
			fmt.Fprintf(tw, "%+.3f\t%+.3f\t", p.P50ErrMs, p.P99ErrMs)
		} else {
			fmt.Fprint(tw, "-\t-\t")
		}
		if b := in.Bare; b != nil && b.Answered > 0 {
			fmt.Fprintf(tw, "%+.3f\t", b.P99ErrMs)
		} else {
			fmt.Fprint(tw, "-\t")
		}
		fmt.Fprintf(tw, "%.3f/%.3f/%.3f\t", in.ShaperLateP50Ms, in.ShaperLateP99Ms, in.ShaperLateMaxMs)
		if in.ShaperGCCycles != nil {
			fmt.Fprintf(tw, "%d\t%.3f\t\n", *in.ShaperGCCycles, in.ShaperGCPauseMaxMs)
		} else {
			fmt.Fprint(tw, "-\t-\t\n")
		}
	}
	for _, r := range rs {
		cond := "quiet"
		if r.Noise == string(NoiseOn) {
			cond = "noisy"
		}
		row(r.Profile, cond, r.idle())
		if r.Noisy != nil {
			row(r.Profile, "noisy", *r.Noisy)
		}
	}
	tw.Flush()
}

// idle is r's own idle round trip as an Idle.
func (r Result) idle() Idle {
	in := Idle{Bare: r.Bare, Ping: r.Ping, ShaperLateP50Ms: r.ShaperLateP50Ms, ShaperLateP99Ms: r.ShaperLateP99Ms,
		ShaperLateMaxMs: r.ShaperLateMaxMs, ShaperGCCycles: r.ShaperGCCycles, ShaperGCPauseMaxMs: r.ShaperGCPauseMaxMs}
	if r.Ping == nil && r.Error != "" {
		in.Error = r.Error
	}
	return in
}

// printLateTraces lists the stalls caught with Config.TraceLate, per
// profile and condition.
func printLateTraces(w io.Writer, rs []Result) {
	one := func(profile, cond string, lt *LateTrace) {
		switch {
		case lt == nil:
		case lt.Error != "":
			fmt.Fprintf(w, "  %s (%s): late trace: error: %s\n", profile, cond, lt.Error)
		case !lt.Caught:
			fmt.Fprintf(w, "  %s (%s): late trace: no frame late enough to stop it\n", profile, cond)
		default:
			fmt.Fprintf(w, "  %s (%s): late trace %s: %s\n", profile, cond, lt.File, lt.Reading)
		}
	}
	for _, r := range rs {
		cond := "quiet"
		if r.Noise == string(NoiseOn) {
			cond = "noisy"
		}
		one(r.Profile, cond, r.LateTrace)
		if r.Noisy != nil {
			one(r.Profile, "noisy", r.Noisy.LateTrace)
		}
	}
}

// WakeProbeLine is p as one line: its figures, the limits and the
// decision.
func WakeProbeLine(p shapedlink.WakeProbe) string {
	on := "left to idle"
	if p.KeepAwake {
		on = "kept awake"
	}
	return fmt.Sprintf("keep-awake auto: timer wake-ups late by p50 %s p99 %s max %s ms over %d sleeps of %d us (%s; limits p99 %s, max %s ms): CPUs %s",
		ms(p.P50Ms), ms(p.P99Ms), ms(p.MaxMs), p.Sleeps, p.SleepUs, p.Scheduling, ms(p.LimitP99Ms), ms(p.LimitMaxMs), on)
}
