package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
)

// progress prints where a matrix is: on a terminal one line rewritten in
// place, elsewhere one log line per run.
type progress struct {
	w          io.Writer
	tty        bool
	total      int
	done       int
	startedAt  time.Time
	measured   int // runs made in this invocation
	runLen     time.Duration
	currentRun string
	// warned are the link warnings already printed (linkWarnings).
	warned map[string]bool
}

func newProgress(w io.Writer, total, done int, runLen time.Duration) *progress {
	p := &progress{w: w, total: total, done: done, startedAt: time.Now(), runLen: runLen}
	if f, ok := w.(*os.File); ok {
		p.tty = isTerminal(f)
	}
	return p
}

func (p *progress) remaining() time.Duration {
	left := p.total - p.done
	per := p.runLen + 3*time.Second
	if p.measured > 0 {
		per = time.Since(p.startedAt) / time.Duration(p.measured)
	}
	return time.Duration(left) * per
}

// Start shows the run about to start.
func (p *progress) Start(run results.Run) {
	if p.w == nil {
		return
	}
	p.currentRun = fmt.Sprintf("%s  %-16s r%d", run.Cell.Dir(), run.Arm, run.Repeat)
	msg := fmt.Sprintf("[%d/%d] %s  elapsed %s  remaining ~%s",
		p.done+1, p.total, p.currentRun, time.Since(p.startedAt).Round(time.Second), p.remaining().Round(time.Second))
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", msg)
	} else {
		fmt.Fprintln(p.w, msg)
	}
}

// Done shows how the run ended.
func (p *progress) Done(run results.Run, err error) {
	switch {
	case errors.Is(err, results.ErrInterrupted):
		p.line(fmt.Sprintf("interrupted during %s %s r%d; it will be redone on the next run", run.Cell.Dir(), run.Arm, run.Repeat))
		return
	case run.Failed != "":
		p.line(fmt.Sprintf("%s %s r%d FAILED: %s", run.Cell.Dir(), run.Arm, run.Repeat, run.Failed))
	}
	p.linkWarnings(run.Link)
	p.finished(run)
}

func (p *progress) finished(run results.Run) {
	p.done++
	p.measured++
	if p.w == nil || p.tty {
		return
	}
	fmt.Fprintf(p.w, "    done: %d samples, %d timeouts, %.2f Mbit/s\n", len(run.Samples), run.Timeouts, run.ThroughputMbit)
}

func (p *progress) line(s string) {
	if p.w == nil {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s\n", s)
		return
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) finish() {
	if p.w != nil && p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// linkWarnings prints, once per matrix each, what a finished run's link
// record says about every run of the matrix: an emulator without
// real-time priority, whose timing competes with the endpoints', and ends
// that kept segmentation offload on netem, which judges kernel TCP's
// super-packets whole where the QUIC arms' datagrams are judged one by one.
func (p *progress) linkWarnings(l results.Link) {
	once := func(key, msg string) {
		if p.warned == nil {
			p.warned = map[string]bool{}
		}
		if !p.warned[key] {
			p.warned[key] = true
			p.line("warning: " + msg)
		}
	}
	if sh := l.Shaper; sh != nil && report.WithoutRealTime(*sh) {
		once("priority", fmt.Sprintf("the emulator runs without real-time priority (%s), so its timing competes with the endpoints'; run as root for SCHED_FIFO", sh.Priority))
	}
	if report.NetemKeptOffload(l) {
		once("netem-keep", report.NetemKeepWarning)
	}
}
