package overlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// waitDelay bounds how long a command's Wait waits for its output pipes
// once its init has exited. The kernel has by then killed every process
// of the command's PID namespace, so they close at once: this is a
// backstop against a descriptor passed outside the namespace.
const waitDelay = 5 * time.Second

// listenPoll is how often startServer looks at the server namespace's
// sockets.
const listenPoll = 20 * time.Millisecond

func signalName(s syscall.Signal) string { return unix.SignalName(s) }

// asSyscall is sig as a syscall.Signal; another os.Signal counts as
// SIGTERM (Config.Signals).
func asSyscall(sig os.Signal) syscall.Signal {
	if s, ok := sig.(syscall.Signal); ok {
		return s
	}
	return syscall.SIGTERM
}

// run is Run's part on Linux: the session, into rec.
func run(ctx context.Context, c Config, rec *Record) error {
	s := &session{c: c, rec: rec, sigs: c.Signals, stdin: c.Stdin, stdout: c.Stdout, stderr: c.Stderr}
	if s.stderr == nil {
		s.stderr = io.Discard
	}
	return s.run(ctx)
}

// session is one run: the link, the two commands, and the signals that
// reach the caller meanwhile.
type session struct {
	c              Config
	rec            *Record
	sigs           <-chan os.Signal
	stdin          io.Reader
	stdout, stderr io.Writer
	link           *shapedlink.Link
	env            []string
	server         *exec.Cmd
	serverDone     chan error
	terminal       *terminal // the terminal the client shares with the caller, or nil
	killed         error     // why the client was killed (the end of ctx), or nil
}

func (s *session) run(ctx context.Context) error {
	if err := s.buildLink(ctx); err != nil {
		return err
	}
	defer s.link.Close()
	s.env = append(os.Environ(),
		"QB_SERVER_ADDR="+s.link.ServerAddr().String(),
		"QB_CLIENT_ADDR="+s.link.ClientAddr().String(),
		"QB_PROFILE="+s.c.Profile.String())
	if len(s.rec.ServerCommand) > 0 {
		// Stopped after the client, and on every way out before it.
		defer s.stopServer(ctx)
		if err := s.startServer(ctx); err != nil {
			return err
		}
	}
	if err := s.runClient(ctx); err != nil {
		return err
	}
	s.readCounters()
	if s.killed != nil {
		return fmt.Errorf("the client command was killed: %w", s.killed)
	}
	return nil
}

// buildLink builds the link; a signal meanwhile cancels the build.
func (s *session) buildLink(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	type built struct {
		link *shapedlink.Link
		err  error
	}
	done := make(chan built, 1)
	go func() {
		l, err := shapedlink.New(ctx, s.c.Profile, s.c.Link)
		done <- built{l, err}
	}()
	select {
	case b := <-done:
		if b.err != nil {
			return fmt.Errorf("building the link: %w", b.err)
		}
		s.link = b.link
		s.rec.Backend, s.rec.Mode, s.rec.Applied = string(b.link.Backend()), string(b.link.Mode()), b.link.Applied()
		s.rec.Offload = s.c.Link.Offload.String()
		return nil
	case sig := <-s.sigs:
		cancel()
		// New returns soon once cancelled and removes what it built; a
		// second signal does not wait for that (the kernel removes it
		// when this process exits).
		select {
		case b := <-done:
			if b.link != nil {
				b.link.Close()
			}
		case <-s.sigs:
		}
		return Interrupted{asSyscall(sig), "while the link was being built"}
	}
}

// startServer starts the server command and waits until it listens as
// ServerPort says, for at most ServerWait (with ServerPort.None, it waits
// ServerWait); a signal or the end of ctx meanwhile ends the run, and so
// does the server command ending first.
func (s *session) startServer(ctx context.Context) error {
	want := s.c.ServerPort
	var before []socket
	if !want.None {
		var err error
		if before, err = listening(s.link.Server()); err != nil {
			return fmt.Errorf("reading the server namespace's sockets: %w; give -server-port none to wait a fixed -server-wait instead", err)
		}
	}
	s.server = command(s.rec.ServerCommand, s.env)
	s.server.Stdout = prefixed(s.stderr, "server: ")
	s.server.Stderr = s.server.Stdout
	// A process group of its own: signals for the caller's group (a
	// terminal's Ctrl-C, timeout's group kill) reach the server only
	// through Run, which stops it after the client.
	s.server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.link.Server().Start(s.server); err != nil {
		s.server = nil
		return fmt.Errorf("starting the server command %q: %w", s.rec.ServerCommand, err)
	}
	s.serverDone = make(chan error, 1)
	go func() { s.serverDone <- s.server.Wait() }()
	deadline := time.NewTimer(s.c.ServerWait)
	defer deadline.Stop()
	var poll <-chan time.Time
	if !want.None {
		t := time.NewTicker(listenPoll)
		defer t.Stop()
		poll = t.C
	}
	var socks []socket
	look := func() (bool, error) {
		var err error
		if socks, err = listening(s.link.Server()); err != nil {
			return false, fmt.Errorf("reading the server namespace's sockets: %w; give -server-port none to wait a fixed -server-wait instead", err)
		}
		return want.met(socks, before), nil
	}
	for {
		select {
		case err := <-s.serverDone:
			s.serverDone <- err // for stopServer
			return fmt.Errorf("the server command %q exited with status %d before %s; its output is above, each line prefixed \"server: \"",
				s.rec.ServerCommand, exitCode(s.server, err), waitedFor(want))
		case <-poll:
			if ok, err := look(); ok || err != nil {
				return err
			}
		case <-deadline.C:
			if want.None {
				return nil
			}
			if ok, err := look(); ok || err != nil {
				return err
			}
			msg := fmt.Sprintf("the server command did not listen on %s within %v; raise -server-wait, or check the server's output (each line prefixed \"server: \")", want, s.c.ServerWait)
			if other := newSockets(socks, before); len(other) > 0 {
				msg += fmt.Sprintf(" and -server-port (it listens on %s)", joinSockets(other))
			} else {
				msg += ", or give -server-port none if it opens no socket"
			}
			return errors.New(msg)
		case sig := <-s.sigs:
			return Interrupted{asSyscall(sig), "while the server command was starting"}
		case <-ctx.Done():
			return fmt.Errorf("ended while the server command was starting: %w", context.Cause(ctx))
		}
	}
}

// waitedFor says what startServer was waiting for, for a message.
func waitedFor(w ServerPort) string {
	if w.None {
		return "the client command started (-server-port none)"
	}
	return "it listened on " + w.String()
}

// runClient runs the client command to its end, passing signals on to it;
// the end of ctx kills it.
func (s *session) runClient(ctx context.Context) error {
	qctx, stopQueue := context.WithCancel(context.Background())
	defer stopQueue()
	queueDone := make(chan []shapedlink.QueueSample, 1)
	if s.c.Queue {
		go func() {
			q, _ := s.link.Instruments().SampleQueue(qctx, shapedlink.ServerEnd, shapedlink.DefaultSampleInterval)
			queueDone <- q
		}()
	}
	client := command(s.rec.ClientCommand, s.env)
	client.Stdin, client.Stdout, client.Stderr = s.stdin, s.stdout, s.stderr
	s.terminal = sharedTerminal(s.stdin)
	if s.terminal == nil {
		// As the server: only what Run passes on reaches it.
		client.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	// Sharing the terminal with the caller, it stays in the caller's
	// process group: in the foreground, the terminal's keys (Ctrl-C,
	// Ctrl-\, Ctrl-Z) reach it directly, and job control stops and
	// continues the caller and the client together (fg, bg).
	if err := s.link.Client().Start(client); err != nil {
		return fmt.Errorf("starting %q in the client namespace: %w", s.rec.ClientCommand, err)
	}
	clientDone := make(chan error, 1)
	go func() { clientDone <- client.Wait() }()
	var waitErr error
	done := ctx.Done()
wait:
	for {
		select {
		case sig := <-s.sigs:
			if !s.terminal.delivers(sig) {
				_ = client.Process.Signal(sig)
			}
		case <-done:
			// Killing its init ends everything the client started.
			_ = client.Process.Kill()
			done = nil
		case waitErr = <-clientDone:
			break wait
		}
	}
	s.terminal.reclaim()
	stopQueue()
	if s.c.Queue {
		s.rec.Queue = <-queueDone
	}
	s.rec.ExitCode = exitCode(client, waitErr)
	if done == nil {
		s.killed = context.Cause(ctx)
	}
	return nil
}

// readCounters puts the link's own account into the record.
func (s *session) readCounters() {
	if err := s.link.Err(); err != nil {
		s.rec.LinkError = err.Error()
	}
	if sh, settled, ok := settledShaperStats(s.link); ok {
		s.rec.Shaper = newShaperRecord(sh)
		s.rec.Shaper.Unsettled = !settled
	}
	s.rec.Egress = map[string]shapedlink.EgressCounters{}
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		if ec, err := s.link.Instruments().EgressCounters(e); err == nil {
			s.rec.Egress[e.String()] = ec
		}
	}
}

// settledShaperStats reads the emulator's counters until two readings
// 5 ms apart agree, so that no frame was between two counters when they
// were read (the shaper publishes them one at a time while it runs); after
// 200 ms of readings that never agree, it returns the last with settled
// false. ok is false without an emulator.
func settledShaperStats(l *shapedlink.Link) (r shapedlink.ShaperReport, settled, ok bool) {
	if r, ok = l.Instruments().ShaperStats(); !ok {
		return r, false, false
	}
	for range 40 {
		time.Sleep(5 * time.Millisecond)
		again, _ := l.Instruments().ShaperStats()
		if sameCounters(r, again) {
			return again, true, true
		}
		r = again
	}
	return r, false, true
}

// sameCounters reports whether a and b hold the same counters.
func sameCounters(a, b shapedlink.ShaperReport) bool {
	if len(a.Directions) != len(b.Directions) {
		return false
	}
	for i := range a.Directions {
		if a.Directions[i].ShaperCounters != b.Directions[i].ShaperCounters {
			return false
		}
	}
	return true
}

// command is an exec.Cmd for args, to be started with Namespace.Start (in
// a PID namespace of its own, under an init that dies with this process).
func command(args []string, env []string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.WaitDelay = waitDelay
	return cmd
}

// exitCode is the shell's convention for how cmd ended: its status, 128
// plus the signal that killed it (Namespace.Start's init reports a
// command's death by signal S as status 128+S already; a signal that
// killed the init itself is read here).
func exitCode(cmd *exec.Cmd, err error) int {
	st := cmd.ProcessState
	if st == nil {
		return 1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 1
	}
	return st.ExitCode()
}

// stopServer asks the server command to stop (SIGTERM), and kills it after
// Grace or at once when a signal reaches the caller or ctx ends meanwhile.
// Killing its init ends everything the server started.
func (s *session) stopServer(ctx context.Context) {
	if s.server == nil {
		return
	}
	select {
	case err := <-s.serverDone:
		s.serverDone <- err
		return
	default:
	}
	_ = s.server.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.serverDone:
		return
	case <-time.After(s.c.Grace):
		fmt.Fprintf(s.stderr, "overlink: the server command did not stop within %v of SIGTERM; killing it\n", s.c.Grace)
	case sig := <-s.sigs:
		fmt.Fprintf(s.stderr, "overlink: %s while the server command was stopping; killing it\n", signalName(asSyscall(sig)))
	case <-ctx.Done():
	}
	_ = s.server.Process.Kill()
	<-s.serverDone
}

// listening lists the listening sockets of namespace ns, from its
// /proc/net tables as a thread inside it sees them. A table the kernel
// does not have (tcp6 and udp6 without IPv6) is skipped.
func listening(ns *shapedlink.Namespace) ([]socket, error) {
	var out []socket
	err := ns.Do(func() error {
		for _, t := range []struct{ file, proto string }{{"tcp", "tcp"}, {"tcp6", "tcp"}, {"udp", "udp"}, {"udp6", "udp"}} {
			// thread-self: the namespace of this thread, which Do has
			// moved, not the process's.
			b, err := os.ReadFile("/proc/thread-self/net/" + t.file)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			socks, err := parseProcNet(t.proto, b)
			if err != nil {
				return err
			}
			for _, s := range socks {
				if !containsSocket(out, s) {
					out = append(out, s)
				}
			}
		}
		return nil
	})
	return out, err
}

// prefixed writes each line to w with a prefix.
func prefixed(w io.Writer, prefix string) io.Writer {
	return &prefixWriter{w: w, prefix: prefix, start: true}
}

type prefixWriter struct {
	w      io.Writer
	prefix string
	start  bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if p.start {
			out = append(out, p.prefix...)
			p.start = false
		}
		out = append(out, c)
		if c == '\n' {
			p.start = true
		}
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
