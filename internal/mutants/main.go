package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

type edit struct {
	name, file, from, to string
}

// mutant is an edit and the tests that must kill it: pkg and tests, when
// set, are a package (a directory under the module root) and a -run
// pattern; otherwise the stats and gsocheck tests run whole.
type mutant struct {
	edit
	pkg, tests string
}

var mutants = []edit{
	{"percentile one rank too high", "stats/percentile.go",
		"r := int(math.Ceil(p*float64(n)/100 - 1e-9))", "r := int(math.Ceil(p*float64(n)/100-1e-9)) + 1"},
	{"percentile rounds the rank down", "stats/percentile.go",
		"r := int(math.Ceil(p*float64(n)/100 - 1e-9))", "r := int(math.Floor(p*float64(n)/100 - 1e-9))"},
	{"median of an even count takes the upper value", "stats/percentile.go",
		"return (s[n/2-1] + s[n/2]) / 2, nil", "return s[n/2], nil"},
	{"warm-up boundary sample discarded", "stats/repeat.go",
		"if s.Offset >= warmup {", "if s.Offset > warmup {"},
	{"spread taken from p50", "stats/cell.go",
		"c.P95Min = time.Duration(slices.Min(p95))\n\tc.P95Max = time.Duration(slices.Max(p95))",
		"c.P95Min = time.Duration(slices.Min(p50))\n\tc.P95Max = time.Duration(slices.Max(p50))"},
	{"cell p95 is the worst repeat, not the median", "stats/cell.go",
		"c.P95 = time.Duration(mustMedian(p95))", "c.P95 = time.Duration(slices.Max(p95))"},
	{"timeouts of unmeasured repeats dropped", "stats/cell.go",
		"c.Timeouts += r.Timeouts\n", "if r.Failed == \"\" && len(r.Samples) > 1 {\n\t\t\tc.Timeouts += r.Timeouts\n\t\t}\n"},
	{"threshold from the narrower spread", "stats/compare.go",
		"Threshold: max(a.Spread, b.Spread),", "Threshold: min(a.Spread, b.Spread),"},
	{"delta at the threshold resolves", "stats/compare.go",
		"case c.Delta > c.Threshold:", "case c.Delta >= c.Threshold:"},
	{"one repeat resolves", "stats/compare.go",
		"case a.Measured < 2 || b.Measured < 2:", "case false:"},
	{"median interval one order statistic too narrow", "stats/inference.go",
		"iv.Lo, iv.Hi = time.Duration(s[best-1]), time.Duration(s[n-best])", "iv.Lo, iv.Hi = time.Duration(s[best]), time.Duration(s[n-best-1])"},
	{"U test counts only strictly more extreme splits", "stats/inference.go",
		"if d >= obs-1e-9 {", "if d > obs+1e-9 {"},
	{"expected slot forgets the UDP header", "gsocheck/gsocheck.go",
		"return datagram + udpHeader + ipv4Header + l2overhead", "return datagram + ipv4Header + l2overhead"},
	{"pooled mean over near-empty samples too", "gsocheck/gsocheck.go",
		"if s.Packets < 2 {\n\t\t\tcontinue", "if s.Packets < 1 {\n\t\t\tcontinue"},
	{"super-packet check replaced by the pooled mean", "gsocheck/gsocheck.go",
		"case r.BeyondTear > 0:", "case r.PooledMean > float64(expected):"},
	{"no allowance for torn reads", "gsocheck/gsocheck.go",
		"case float64(r.AboveOne) > tornLimit:", "case float64(r.AboveOne) > 0*tornLimit:"},
	{"a slot of exactly one datagram counts as above", "gsocheck/gsocheck.go",
		"if s.Bytes > s.Packets*expected {", "if s.Bytes >= s.Packets*expected {"},
	{"tear bound one datagram too generous", "gsocheck/gsocheck.go",
		"if s.Bytes > (s.Packets+1)*expected {", "if s.Bytes > (s.Packets+2)*expected {"},
	{"oversize counter ignored", "gsocheck/gsocheck.go",
		"case c.Oversize > 0:", "case false:"},
}

// modelMutants break the batch engines' shares, check and submission
// (measure/batch, and the shares it reads from the plan's merge), the link model and its descriptions, and the
// command-line helpers (internal/cli, shapedlink/linkflag); their pure
// tests (no namespace, no engine needed) must kill them.
var modelMutants = []mutant{
	{edit{"batch: each shard expected to hold an even split of the plan, not its share", "measure/plan/merge.go",
		"len(Shard{i, merged.Shards}.share(full))", "len(full)/merged.Shards"},
		"measure/batch", "TestShareMatchesBench|TestCheck"},
	{edit{"batch: failed runs counted as measured", "measure/batch/check.go",
		"if r.Failed != \"\" {\n\t\t\t\t\ts.Failed++", "if r.Failed == \"-\" {\n\t\t\t\t\ts.Failed++"},
		"measure/batch", "TestCheck"},
	{edit{"batch: the merge waits for the array to succeed (afterok), not to end", "measure/batch/slurm.go",
		"\"--dependency=afterany:\"+id", "\"--dependency=afterok:\"+id"},
		"measure/batch", "TestSubmit"},
	{edit{"cli: a stray argument accepted", "internal/cli/cli.go",
		"if fs.NArg() > 0 {", "if false && fs.NArg() > 0 {"},
		"internal/cli", "TestParseAndExit"},
	{edit{"cli: the flag set prints its own error and usage", "internal/cli/cli.go",
		"fs.SetOutput(io.Discard)\n", "fs.SetOutput(out)\n"},
		"internal/cli", "TestParseAndExit"},
	{edit{"linkflag: a netem link takes the emulator's settings", "shapedlink/linkflag/linkflag.go",
		"if o.Backend != shapedlink.BackendNetem {", "if true {"},
		"shapedlink/linkflag", "TestEmulatorDefaults"},
	{edit{"linkflag: a departure window over 1ms accepted", "shapedlink/linkflag/linkflag.go",
		"if f.window < 0 || f.window > shapedlink.MaxDepartureWindow {", "if f.window < 0 {"},
		"shapedlink/linkflag", "TestEmulatorDefaults"},
	{edit{"trace: a frame's unused bytes not left to the next", "shapedlink/internal/linkmodel/trace.go",
		"m.traceLeft -= size\n\treturn m.oppTime(m.traceK)", "m.traceLeft = 0\n\treturn m.oppTime(m.traceK)"},
		"shapedlink/internal/linkmodel", "Trace"},
	{edit{"trace: the period not added on each repeat", "shapedlink/internal/linkmodel/trace.go",
		"return k/n*m.tracePeriod + m.trace[k%n]", "return m.trace[k%n]"},
		"shapedlink/internal/linkmodel", "Trace"},
	{edit{"trace: an opportunity at the arrival time usable", "shapedlink/internal/linkmodel/trace.go",
		"if v <= r {", "if v < r {"},
		"shapedlink/internal/linkmodel", "Trace"},
	{edit{"blackout: held frames leave before the link is up", "shapedlink/internal/linkmodel/model.go",
		"t, m.queued = max(t, m.upAt), true", "t, m.queued = t, true"},
		"shapedlink/internal/linkmodel", "Blackout"},
	{edit{"4-state loss: p23 and p14 swapped in the model", "shapedlink/internal/linkmodel/model.go",
		"p14: n.P14, p23: n.P23", "p14: n.P23, p23: n.P14"},
		"shapedlink/internal/linkmodel", "FourStateLossPattern"},
	{edit{"flow samples: the emptiest flow queues published", "shapedlink/internal/emulator/recv_linux.go",
		"return cmp.Compare(b.Bytes, a.Bytes)", "return cmp.Compare(a.Bytes, b.Bytes)"},
		"shapedlink/internal/emulator", "Fullest"},
	{edit{"step schedule: back to the high rate never", "shapedlink/internal/linkspec/schedule.go",
		"{At: every/2 + dur, Set: \"rate\", Value: rates[0]}", "{At: every/2 + dur, Set: \"rate\", Value: rates[1]}"},
		"shapedlink", "LoadSchedule|ScheduledChanges"},
	{edit{"jitter CDF: the table read at half scale", "shapedlink/internal/linkspec/check.go",
		"vals[i] = j * float64(v) / disttable.Scale", "vals[i] = j * float64(v) / disttable.Scale / 2"},
		"shapedlink", "JitterCDF"},
	{edit{"in-process link: the clock read from the system, not the time package (a synctest bubble's)", "shapedlink/internal/inproc/clock.go",
		"import \"time\"\n\nfunc (l *Link) now() int64 { return int64(time.Since(l.base)) }",
		"import \"syscall\"\n\nfunc (l *Link) now() int64 {\n\tvar tv syscall.Timeval\n\t_ = syscall.Gettimeofday(&tv)\n\treturn tv.Nano() - l.base.UnixNano()\n}"},
		"shapedlink/internal/inproc", "VirtualTime|Deterministic"},
	{edit{"in-process link: a corrupted frame's source-address flip dropped", "shapedlink/internal/inproc/deliver.go",
		"case at >= ethSrc && at < ethType:", "case false:"},
		"shapedlink/internal/inproc", "CorruptionAsTheReceiver"},
	{edit{"line: ties leave in reverse arrival order", "shapedlink/internal/linkmodel/line.go",
		"if l.ring[prev].Due <= h.Due {", "if l.ring[prev].Due < h.Due {"},
		"shapedlink/internal/linkmodel", "LineOrder|CarrierAsTheLoop"},
	{edit{"carrier: the duplicate gets the original's edit", "shapedlink/internal/linkmodel/carrier.go",
		"Queued: queued, Edit: j.DupEdit})", "Queued: queued, Edit: j.Edit})"},
		"shapedlink/internal/linkmodel", "LineOrder|CarrierAsTheLoop"},
	{edit{"splitter: a piece's TCP sequence number not advanced", "shapedlink/internal/segment/segment.go",
		"binary.BigEndian.Uint32(th[4:])+uint32(first*f.gsoSize)", "binary.BigEndian.Uint32(th[4:])"},
		"shapedlink/internal/segment", "RunsMatchKernel"},
	{edit{"splitter: PSH left on every piece", "shapedlink/internal/segment/segment.go",
		"th[13] &^= fin | psh", "th[13] &^= fin"},
		"shapedlink/internal/segment", "RunsMatchKernel"},
	{edit{"offload keep: a super-packet judged as one packet", "shapedlink/internal/emulator/recv_linux.go",
		"whole: err != nil || !f.Split()}", "whole: err != nil || !f.Split() || true}"},
		"shapedlink", "OffloadKeepUDPSegmentLoss"},
	{edit{"teardown wait: ends as soon as the worker stops", "shapedlink/teardown_linux.go",
		"case seen && now.Sub(quietSince) >= w.quiet:", "case seen:"},
		"shapedlink", "QuietWait"},
	{edit{"live keys: a key never answered left out of its run's samples", "measure/spicelive/records.go",
		"run.Samples = append(slices.Clone(a.Samples), a.Censored...)", "run.Samples = slices.Clone(a.Samples)"},
		"measure/spicelive", "TestFillRunCountsCensoredKeys"},
	{edit{"live keys: the typing's last timeout untimed although the run waited for its answers", "measure/spicelive/keydraw/glyph.go",
		"if answersEnd > 0 {\n\t\treturn typingEnd\n", "if answersEnd > 0 {\n\t\treturn typingEnd - timeout\n"},
		"measure/spicelive/keydraw", "TestAnalyseGlyphsTimesToTheEndAndCensors"},
	{edit{"live order: the arms as listed whatever the order asked", "measure/spicelive/config.go",
		"if c.Order != OrderRandom {", "if true {"},
		"measure/spicelive", "TestPlanShufflesArmsPerRepeat"},
	{edit{"live picture: good at a quarter of the workload's rate", "measure/spicelive/picture/picture.go",
		"clientFPS >= GoodPictureShare*offeredFPS", "clientFPS >= GoodPictureShare*offeredFPS/2"},
		"measure/spicelive/picture", "TestGoodPicture"},
	{edit{"live verdicts: the warm-up kept in the recomputed figures", "measure/spicelive/summary/verdicts.go",
		"f.Draw, _ = stats.SummariseCell(draws, warmup)", "f.Draw, _ = stats.SummariseCell(draws, 0)"},
		"measure/spicelive/summary", "TestVerdictsFromSamplesPairs"},
	{edit{"arms: asking about tcp-<controller> registers it", "measure/arm.go",
		"\t\treturn tcpWith{cc}, nil", "\t\tregistry.transports = append(registry.transports, tcpWith{cc})\n\t\treturn tcpWith{cc}, nil"},
		"measure", "TestLookupChangesNothing"},
	{edit{"arms: a registered Transport's QUIC ignored", "measure/arm.go",
		"return err == nil && t.QUIC()", "return err == nil && t != nil && transport.Arm(a).IsQUIC()"},
		"measure", "TestArmQUIC"},
	{edit{"arms: quinn-<controller> runs quinn's cubic whatever it names", "measure/quinn.go",
		"return quinnArm{pin: cc}, true, nil", "return quinnArm{pin: \"cubic\"}, true, nil"},
		"measure", "TestQuinnPinnedArms"},
	{edit{"arms: the cell's controller overrides quinn-<controller>'s own", "measure/quinn.go",
		"if q.pin != \"\" {\n\t\tcc = q.pin", "if q.pin != \"\" && cc == \"\" {\n\t\tcc = q.pin"},
		"measure", "TestQuinnPinnedArms"},
	{edit{"teardown wait: the rescuer taken for a running teardown", "shapedlink/teardown_linux.go",
		"bytes.HasSuffix(comm, []byte(\"+netns\"))", "bytes.HasSuffix(comm, []byte(\"netns\"))"},
		"shapedlink", "RunningNetnsWork"},
	{edit{"cross traffic: the flows the profile asks for never started", "shapedlink/link_linux.go",
		"if err := l.startCross(ctx); err != nil {", "if err := ctx.Err(); err != nil {"},
		"shapedlink", "TestCrossFlowsAsAsked"},
	{edit{"cross traffic: a flow that stopped early not the link's error", "shapedlink/link.go",
		"if err := l.cross.err(); err != nil {", "if err := error(nil); err != nil {"},
		"shapedlink", "TestCrossFlowFailureIsTheLinks"},
	{edit{"cross traffic: left out of the run's record", "measure/rig/stage.go",
		"run.Link.Cross = in.CrossFlows()", "_ = in.CrossFlows()"},
		"measure/rig", "TestLocalRecordsCrossTraffic"},
	{edit{"carrier state: a closed TCP channel's last TCP_INFO not kept", "transport/tcp.go",
		"\tc.last = &info\n", "\t_ = info\n"},
		"transport", "TestCarrierTCPStateOutlivesClose"},
	{edit{"carrier state: a quinn carrier's state at the end read without its exit statistics", "measure/carrier.go",
		"\t\tc.Close()\n", "\t\t_ = c\n"},
		"measure", "TestQuinnCarrierCarries"},
	{edit{"tcp series: the first TCP_INFO sample left to the sampling goroutine", "transport/tcp.go",
		"\t\ts.sampleTCPOnce()\n\t\tctx, cancel", "\t\tctx, cancel"},
		"transport", "TestTCPSeriesStartsBeforeData"},
}

func main() {
	only := flag.String("run", "", "only mutants whose name contains this")
	timeout := flag.Duration("timeout", 5*time.Minute, "per-mutant test timeout")
	flag.Parse()
	if _, err := os.Stat("go.mod"); err != nil {
		fmt.Fprintln(os.Stderr, "mutants: run from the module root (go run ./internal/mutants)")
		os.Exit(2)
	}
	// The work module has no quinn/ to build the quinn arms' program from,
	// so their tests are given the one built here.
	if os.Getenv(quinncarrier.BinaryEnv) == "" {
		if bin, err := quinncarrier.Binary(context.Background()); err == nil {
			os.Setenv(quinncarrier.BinaryEnv, bin)
		} else {
			fmt.Fprintf(os.Stderr, "mutants: the quinn arms' tests will skip, so their mutants survive: %v\n", err)
		}
	}
	work, err := os.MkdirTemp("", "quicbench-mutants-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(work)
	w := workspace{dir: work, timeout: *timeout}

	if err := w.fresh(); err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	if ok, out := w.run(mutant{}); !ok {
		fmt.Fprintf(os.Stderr, "mutants: the unmutated tests fail; fix them first:\n%s", out)
		os.Exit(1)
	}
	killed, survived, stale := 0, 0, 0
	all := modelMutants
	for _, e := range mutants {
		all = append(all, mutant{edit: e})
	}
	for _, m := range all {
		if *only != "" && !strings.Contains(m.name, *only) {
			continue
		}
		v, err := w.try(m)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(2)
		}
		switch v {
		case wasKilled:
			killed++
		case hasSurvived:
			survived++
		case isStale:
			stale++
		}
	}
	fmt.Printf("mutants: %d killed, %d survived, %d stale\n", killed, survived, stale)
	if survived > 0 || stale > 0 {
		os.Exit(1)
	}
}
