package pathchange

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// The server and client are the program re-executed inside their
// namespaces with these variables set (names of their own, so the bench
// package's run loop never mistakes them for its processes).
var roles = rig.RoleEnv{Role: "QUICBENCH_PATHCHANGE_ROLE", Spec: "QUICBENCH_PATHCHANGE_SPEC"}

// File descriptors the client inherits: it writes requests to the
// orchestrator on ctrlOutFD ("remove") and reads the answers on ctrlInFD.
// (The server's readiness pipe is rig.Rig's.)
const (
	ctrlOutFD = 3
	ctrlInFD  = 4
)

// roleSpec is what a server or client process is told to do.
type roleSpec struct {
	rig.RoleBase
	Arm      transport.Arm    `json:"arm"`
	Workload spicelike.Config `json:"workload"`
	// Change is the path change the client makes; nil on the server.
	Change *Change `json:"change,omitempty"`
	// HoldEcho is a test hook: the client makes its reader slow through
	// the change. From the change's start it keeps what the interactive
	// channel reads from the workload, waits until an echo has arrived,
	// and lets it through only once the change is done (readHold).
	HoldEcho bool `json:"hold_echo,omitempty"`
}

// eventLog collects events from several goroutines.
type eventLog struct {
	side string
	log  *slog.Logger
	mu   sync.Mutex
	ev   []Event
}

func (l *eventLog) add(format string, args ...any) {
	e := Event{At: time.Now(), Side: l.side, What: fmt.Sprintf(format, args...)}
	l.mu.Lock()
	l.ev = append(l.ev, e)
	l.mu.Unlock()
	if l.log != nil {
		l.log.Info(e.What)
	}
}

func (l *eventLog) events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.ev...)
}

// MaybeRunRole must be called first thing in main (and in TestMain) of a
// program that calls Run: a run's server and client are that program
// started again inside their namespaces, and in such a process
// MaybeRunRole does the role's job and exits. Otherwise it returns at
// once.
func MaybeRunRole() {
	var events *eventLog
	withEvents := func(role string,
		run func(context.Context, roleSpec, *eventLog) (roleResult, error)) func(context.Context, roleSpec, *slog.Logger) (roleResult, error) {
		return func(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
			events = &eventLog{side: role, log: log}
			return run(ctx, spec, events)
		}
	}
	rig.ServeRole(roles, map[string]func(context.Context, roleSpec, *slog.Logger) (roleResult, error){
		rig.RoleServer: withEvents(rig.RoleServer, runServer),
		rig.RoleClient: withEvents(rig.RoleClient, runClient),
	}, func(role string, res *roleResult, err error, log *slog.Logger) {
		if events == nil { // an unknown role
			events = &eventLog{side: role, log: log}
		}
		res.Role = role
		if err != nil {
			res.Err = err.Error()
			events.add("role ended with an error: %v", err)
		}
		res.Events = events.events()
	})
}

// watch polls where the session's connections send and whether they have
// ended, every 5 ms, and logs each change: on the server this is where the
// client's migration becomes visible.
func watch(ctx context.Context, sess *transport.Session, events *eventLog) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	var lastAddrs, lastErrs string
	for {
		addrs := strings.Join(sess.RemoteAddrs(), " ")
		if addrs != lastAddrs {
			events.add("peer address %s", addrs)
			lastAddrs = addrs
		}
		var errs []string
		for i, e := range sess.ConnErrors() {
			if e != "" {
				errs = append(errs, fmt.Sprintf("connection %d: %s", i, e))
			}
		}
		if e := strings.Join(errs, "; "); e != lastErrs {
			events.add("connections ended: %s", e)
			lastErrs = e
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func runServer(ctx context.Context, spec roleSpec, events *eventLog) (roleResult, error) {
	res := roleResult{}
	ln, err := transport.Listen(ctx, spec.Arm, spec.Addr, spec.Transport)
	if err != nil {
		return res, fmt.Errorf("listen on %s: %w", spec.Addr, err)
	}
	defer ln.Close()
	rig.SignalReady(ln.Addr())
	sess, err := ln.Accept(ctx)
	if err != nil {
		return res, fmt.Errorf("accept: %w", err)
	}
	defer sess.Close()
	res.SessionUp = time.Now()
	events.add("session up")
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watch(wctx, sess, events) })
	out, err := spicelike.RunServer(ctx, spec.Workload, sess.Channels())
	events.add("workload ended: %d channel errors, cancelled %v", len(out.Errors), out.Cancelled)
	for _, e := range out.Errors {
		events.add("channel error: %s", e.Error())
	}
	res.Server = &out
	if err == nil {
		err = out.Err()
	}
	if ctx.Err() == nil {
		measure.WaitPeerClose(sess.Channels()[0], spec.Workload.Timeout)
	}
	stopWatch()
	wg.Wait()
	st := sess.State()
	res.State = &st
	return res, err
}

func runClient(ctx context.Context, spec roleSpec, events *eventLog) (roleResult, error) {
	res := roleResult{}
	sess, err := transport.Dial(ctx, spec.Arm, spec.Addr, spec.Transport)
	if err != nil {
		return res, fmt.Errorf("dial %s: %w", spec.Addr, err)
	}
	defer sess.Close()
	res.SessionUp = time.Now()
	events.add("session up, connect time %v", sess.ConnectTime())
	chans := sess.Channels()
	var hold *readHold
	if spec.HoldEcho {
		i := slices.IndexFunc(spec.Workload.Channels, func(c spicelike.Channel) bool { return c.Role == spicelike.Interactive })
		if i < 0 || i >= len(chans) {
			return res, errors.New("hold_echo: the workload has no interactive channel whose reads could be held")
		}
		hold = newReadHold(chans[i])
		chans[i] = hold
	}
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watch(wctx, sess, events) })
	if spec.Change != nil {
		ctrlOut := os.NewFile(ctrlOutFD, "ctrl-out")
		ctrlIn := os.NewFile(ctrlInFD, "ctrl-in")
		defer ctrlOut.Close()
		defer ctrlIn.Close()
		wg.Go(func() {
			res.Migration = change(wctx, sess, *spec.Change, res.SessionUp, ctrlOut, bufio.NewReader(ctrlIn), hold,
				spec.Workload.Timeout, events)
		})
	}
	out, err := spicelike.RunClient(ctx, spec.Workload, chans)
	events.add("workload ended: %d samples, %d timeouts, %d channel errors", len(out.Samples), out.Timeouts, len(out.Errors))
	for _, off := range out.TimeoutOffsets {
		events.add("interactive request sent at offset %v timed out after %v", off, spec.Workload.Timeout)
	}
	for _, e := range out.Errors {
		events.add("channel error: %s", e.Error())
	}
	res.Client = &out
	stopWatch()
	wg.Wait()
	st := sess.State()
	res.State = &st
	if err == nil && len(out.Errors) > 0 {
		err = out.Err()
	}
	return res, err
}

// change makes the path change at its time: the migration and the removal
// of the old address, in the order asked for. With a hold, it first waits
// (up to wait) for the interactive channel to read an echo, and keeps it
// from the workload until both steps are done.
func change(ctx context.Context, sess *transport.Session, c Change, up time.Time, out io.Writer, in *bufio.Reader,
	hold *readHold, wait time.Duration, events *eventLog) *transport.MigrationResult {
	t := time.NewTimer(time.Until(up.Add(c.At)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		events.add("the run ended before the path change was due")
		return nil
	case <-t.C:
	}
	events.add("path change begins (%s): %s -> %s", c.Order, c.OldAddr, c.NewAddr)
	if hold != nil {
		hold.hold()
		defer func() {
			events.add("interactive reads released")
			hold.release()
		}()
		select {
		case <-hold.caught:
			events.add("interactive read held: an echo arrived")
		case <-time.After(wait):
			events.add("interactive read held: no echo arrived within %v", wait)
		case <-ctx.Done():
		}
	}
	var mig *transport.MigrationResult
	migrate := func() {
		to, err := netip.ParseAddr(c.NewAddr)
		if err != nil {
			events.add("bad new address %q: %v", c.NewAddr, err)
			return
		}
		mctx, cancel := context.WithTimeout(ctx, c.ProbeTimeout)
		defer cancel()
		events.add("migrate to %s", to)
		r, err := sess.Migrate(mctx, to)
		if err != nil {
			events.add("migration failed: %v", err)
		}
		if len(r.Paths) > 0 {
			for _, p := range r.Paths {
				events.add("path %s -> %s: validated after %v, switched after %v%s", p.From, p.To, p.Validated, p.Switched, errSuffix(p.Err))
			}
			mig = &r
		}
	}
	remove := func() {
		events.add("asking for %s to be removed", c.OldAddr)
		if _, err := fmt.Fprintf(out, "remove\n"); err != nil {
			events.add("cannot reach the orchestrator: %v", err)
			return
		}
		line, err := in.ReadString('\n')
		if err != nil {
			events.add("no answer from the orchestrator: %v", err)
			return
		}
		events.add("orchestrator: %s", strings.TrimSpace(line))
	}
	if c.Order == OrderBreakFirst {
		remove()
		migrate()
	} else {
		migrate()
		remove()
	}
	return mig
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// serveControl answers the client's requests until it closes its end: on
// "remove" it removes the old address and says when.
func serveControl(in io.Reader, out io.Writer, remove func() error, events *eventLog) {
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		switch strings.TrimSpace(line) {
		case "remove":
			t0 := time.Now()
			err := remove()
			took := time.Since(t0)
			if err != nil {
				events.add("removing the old client address failed: %v", err)
				fmt.Fprintf(out, "failed after %v: %s\n", took, strconv.Quote(err.Error()))
				continue
			}
			events.add("old client address removed (took %v)", took)
			fmt.Fprintf(out, "removed at %s (took %v)\n", t0.Format(time.RFC3339Nano), took)
		default:
			fmt.Fprintf(out, "unknown request %q\n", strings.TrimSpace(line))
		}
	}
}

// readHold passes a channel's reads through until hold, then keeps each
// read's bytes from the caller until release: a reader too busy to run
// while its data waits. caught is closed when the first bytes are kept.
type readHold struct {
	io.ReadWriteCloser
	caught   chan struct{}
	released chan struct{}

	mu       sync.Mutex
	holding  bool
	isCaught bool
	isFree   bool
}

func newReadHold(c io.ReadWriteCloser) *readHold {
	return &readHold{ReadWriteCloser: c, caught: make(chan struct{}), released: make(chan struct{})}
}

func (h *readHold) hold() {
	h.mu.Lock()
	h.holding = !h.isFree
	h.mu.Unlock()
}

func (h *readHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holding = false
	if !h.isFree {
		h.isFree = true
		close(h.released)
	}
}

// Read reads from the channel and, while held, returns only on release.
func (h *readHold) Read(p []byte) (int, error) {
	n, err := h.ReadWriteCloser.Read(p)
	h.mu.Lock()
	keep := h.holding && n > 0
	if keep && !h.isCaught {
		h.isCaught = true
		close(h.caught)
	}
	h.mu.Unlock()
	if keep {
		<-h.released
	}
	return n, err
}

// SetReadDeadline and SetWriteDeadline pass to the channel, so that the
// workload can still interrupt it (a held read returns only on release).
func (h *readHold) SetReadDeadline(t time.Time) error {
	if d, ok := h.ReadWriteCloser.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t)
	}
	return errors.ErrUnsupported
}

func (h *readHold) SetWriteDeadline(t time.Time) error {
	if d, ok := h.ReadWriteCloser.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}
