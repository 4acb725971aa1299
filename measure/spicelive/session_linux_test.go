package spicelive

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// Typing stops at the session's death and fails with it: keys typed into
// an X server whose client (spicy) is gone never reach the tunnel.
func TestTypingStopsAtADeath(t *testing.T) {
	d := xsession.NewDeaths()
	spec := clientSpec{Duration: 10 * time.Second, KeyInterval: 20 * time.Millisecond}
	var res ClientResult
	pressed := 0
	press := func(string) error {
		pressed++
		if pressed == 5 {
			d.Died(errors.New("spicy exited (signal: killed)"))
		}
		return nil
	}
	start := time.Now()
	err := typeKeys(context.Background(), spec, press, d, start, &res)
	if err == nil || !strings.Contains(err.Error(), "spicy exited") || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("typing over a dead session: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("typing went on %v after the death", took)
	}
	if res.Keys < 5 || res.Keys > 8 || res.TypingEnd != 0 {
		t.Errorf("%d keys typed, typing end %v: want the keys up to the death and no end", res.Keys, res.TypingEnd)
	}
}

// A server that exited first fails the run with its own reason, even when
// the client, stopped by the orchestrator, says something else.
func TestOutcomeOfADeadSession(t *testing.T) {
	whole := outcome{server: liveResult{Server: &ServerResult{}}, client: liveResult{Client: &ClientResult{}}}
	if err := whole.err(); err != nil {
		t.Fatalf("both roles measured: %v", err)
	}
	died := whole
	died.serverEnded = true
	died.server.Err = "the session died: Xorg exited 6.1s into the run (signal: killed)"
	died.client.Err = "context canceled"
	if err := died.err(); err == nil || !strings.Contains(err.Error(), "Xorg exited") {
		t.Errorf("server died first: %v", err)
	}
	gone := whole
	gone.serverEnded, gone.serverRead, gone.serverExit = true, errors.New("no result"), errors.New("signal: killed")
	if err := gone.err(); err == nil || !strings.Contains(err.Error(), "exited during the session (signal: killed") {
		t.Errorf("server killed: %v", err)
	}
	client := whole
	client.client.Err = "after 12 keys, the session died: spicy exited 8.0s into the run (signal: killed)"
	if err := client.err(); err == nil || !strings.Contains(err.Error(), "spicy exited") {
		t.Errorf("client's session died: %v", err)
	}
}

// A run that failed is kept aside and redone by the next invocation.
func TestFailedRunIsRedoneOnResume(t *testing.T) {
	c := Config{Profiles: []string{"10:100"}, Arms: []measure.Arm{measure.TCP}, Readings: []string{ReadingLive}, Repeats: 1,
		Duration: 5 * time.Second, Warmup: time.Second, CC: "reno", KeyInterval: 250 * time.Millisecond,
		BusyInterval: 50 * time.Millisecond, Reference: "1:100", Workdir: t.TempDir()}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	calls := 0
	fake := func(ctx context.Context, c Config, j Job, cell results.Cell, _ shapedlink.Profile, dir string,
		_ *spicelike.Replay, _ error, log *slog.Logger) (results.Run, error) {
		calls++
		w := spicelike.Config{Duration: c.Duration, Warmup: c.Warmup}
		return results.RecordRun(ctx, dir, results.NewRun(cell, string(j.Arm), measure.Arm(j.Arm).QUIC(), j.Repeat, w.Duration, w.Warmup), log, func(run *results.Run) error {
			if calls == 1 {
				return errors.New("the session died: Xorg exited 6.0s into the run (signal: killed)")
			}
			for i := range 10 {
				run.Samples = append(run.Samples, stats.Sample{Offset: time.Second + time.Duration(i)*c.KeyInterval, RTT: 15 * time.Millisecond})
			}
			return nil
		}, nil)
	}
	var progress bytes.Buffer
	if err := runPlan(context.Background(), c, &progress, log, fake); !errors.Is(err, ErrRunsFailed) {
		t.Fatalf("a dead session's run: %v, want ErrRunsFailed\n%s", err, progress.String())
	}
	cell, _, _ := c.cell("10:100")
	dir := results.RunDir(c.ReadingDir(ReadingLive), cell, "tcp", 1)
	if run, st, _ := results.Check(dir, cell, "tcp", 1); st != results.FailedRun || !strings.Contains(run.Failed, "Xorg exited") {
		t.Fatalf("recorded as %v (%q), want failed with the reason", st, run.Failed)
	}
	progress.Reset()
	if err := runPlan(context.Background(), c, &progress, log, fake); err != nil || calls != 2 {
		t.Fatalf("resuming: %v after %d runs\n%s", err, calls, progress.String())
	}
	if _, st, err := results.Check(dir, cell, "tcp", 1); st != results.Measured {
		t.Errorf("after resuming the run is %v (%v), want measured", st, err)
	}
	aside, _ := filepath.Glob(dir + ".failed-*")
	if len(aside) != 1 {
		t.Errorf("the failed run kept aside as %v, want one", aside)
	}
	if err := runPlan(context.Background(), c, &progress, log, fake); err != nil || calls != 2 {
		t.Errorf("a measured run was redone: %v, %d runs", err, calls)
	}
}

// Keys typed into the client's screen that never reached the tunnel (its
// spicy gone, or not listening) are unanswered: counted in the run's
// timeouts, not left out.
func TestKeysNotSentAreUnanswered(t *testing.T) {
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key(ms(1000)), draw(ms(1020), glyph, true),
		key(ms(1500)), draw(ms(1530), glyph, true),
	}}
	rec := &LiveRecord{Server: &ServerResult{Typing: typingArea, Busy: busyArea},
		Client: &ClientResult{TypingStart: ms(1000), TypingEnd: ms(13000), Keys: 24}}
	if n := rec.analyse(Config{}, tr); n != 22 {
		t.Errorf("%d keys not sent, want 24 typed less 2 on the wire", n)
	}
	var run results.Run
	fillRun(&run, Config{Warmup: 0}, rec, tr)
	a := rec.Analysis
	if a.Keys != 2 || a.Typed != 24 || a.NotSent != 22 || a.Unanswered != 22 || run.Timeouts != 22 || len(run.Samples) != 2 {
		t.Errorf("keys %d, typed %d, not sent %d, unanswered %d, run's timeouts %d, samples %d; want 2, 24, 22, 22, 22, 2",
			a.Keys, a.Typed, a.NotSent, a.Unanswered, run.Timeouts, len(run.Samples))
	}
	rec.Client.Keys = 2
	if n := rec.analyse(Config{}, tr); n != 0 || rec.Analysis.Unanswered != 0 {
		t.Errorf("every key sent: %d not sent, %d unanswered", n, rec.Analysis.Unanswered)
	}
}
