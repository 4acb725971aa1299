package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/shakenfist/quicbench/internal/buildinfo"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// relayed are the signals overlink catches from the start and passes on to
// the client command while it runs; before and after that, they end the
// run.
var relayed = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// waitDelay bounds how long a command's Wait waits for its output pipes
// once its init has exited. The kernel has by then killed every process
// of the command's PID namespace, so they close at once: this is a
// backstop against a descriptor passed outside the namespace.
const waitDelay = 5 * time.Second

// interrupted is the error of a run that a signal ended before the client
// command had run to its end.
type interrupted struct {
	sig   syscall.Signal
	stage string
}

func (e interrupted) Error() string {
	return fmt.Sprintf("interrupted by %s %s", unix.SignalName(e.sig), e.stage)
}

func overLink(c config, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := shapedlink.Reexec(); err != nil {
		fmt.Fprintln(stderr, "overlink:", err)
		return 1
	}
	// Caught before anything starts, so that no signal ends this process
	// while it holds a half-built link or a running command, and none is
	// lost: each stage below decides what a signal means there.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, relayed...)
	defer signal.Stop(sigs)

	rec := Record{Profile: c.profile.String(), ClientCommand: clientArgs(c.client), Started: time.Now(), ExitCode: -1, Build: buildinfo.Read()}
	if c.server != "" {
		// As documented: through the shell, so quoting and variables such
		// as $QB_SERVER_ADDR work; exec, so that the signals overlink
		// sends reach the server itself, not a shell waiting for it.
		rec.ServerCommand = []string{"sh", "-c", "exec " + c.server}
	}
	s := &session{c: c, rec: &rec, sigs: sigs, stdin: stdin, stdout: stdout, stderr: stderr}
	err := s.run()
	code := rec.ExitCode
	var intr interrupted
	switch {
	case errors.As(err, &intr):
		code = 128 + int(intr.sig)
	case err != nil:
		code = 1
	}
	if err != nil {
		rec.Error = err.Error()
		fmt.Fprintln(stderr, "overlink:", err)
	}
	rec.Finished = time.Now()
	if rec.LinkError != "" {
		fmt.Fprintln(stderr, "overlink: the link broke while the command ran:", rec.LinkError)
	}
	finish(c, &rec, stderr)
	return code
}

// clientArgs is the client command, or the user's shell when none is given.
func clientArgs(args []string) []string {
	if len(args) > 0 {
		return args
	}
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	return []string{shell}
}

// session is one run: the link, the two commands, and the signals that
// reach overlink meanwhile.
type session struct {
	c              config
	rec            *Record
	sigs           <-chan os.Signal
	stdin          io.Reader
	stdout, stderr io.Writer
	link           *shapedlink.Link
	env            []string
	server         *exec.Cmd
	serverDone     chan error
	terminal       *terminal // the terminal the client shares with overlink, or nil
}

func (s *session) run() error {
	if err := s.buildLink(); err != nil {
		return err
	}
	defer s.link.Close()
	s.env = append(os.Environ(),
		"QB_SERVER_ADDR="+s.link.ServerAddr().String(),
		"QB_CLIENT_ADDR="+s.link.ClientAddr().String(),
		"QB_PROFILE="+s.c.profile.String())
	if len(s.rec.ServerCommand) > 0 {
		// Stopped after the client, and on every way out before it.
		defer s.stopServer()
		if err := s.startServer(); err != nil {
			return err
		}
	}
	if err := s.runClient(); err != nil {
		return err
	}
	s.readCounters()
	return nil
}

// buildLink builds the link; a signal meanwhile cancels the build.
func (s *session) buildLink() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type built struct {
		link *shapedlink.Link
		err  error
	}
	done := make(chan built, 1)
	go func() {
		l, err := shapedlink.New(ctx, s.c.profile, shapedlink.Options{Backend: s.c.backend, Seed: s.c.seed, Offload: s.c.offload})
		done <- built{l, err}
	}()
	select {
	case b := <-done:
		if b.err != nil {
			return fmt.Errorf("building the link: %w", b.err)
		}
		s.link = b.link
		s.rec.Backend, s.rec.Mode, s.rec.Applied = string(b.link.Backend()), string(b.link.Mode()), b.link.Applied()
		s.rec.Offload = s.c.offload.String()
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
		return interrupted{sig.(syscall.Signal), "while the link was being built"}
	}
}

// startServer starts the server command and waits until it listens as
// -server-port says, for at most -server-wait (with -server-port none, it
// waits -server-wait); a signal meanwhile ends the run, and so does the
// server command ending first.
func (s *session) startServer() error {
	want := s.c.serverPort
	var before []socket
	if !want.none {
		var err error
		if before, err = listening(s.link.Server()); err != nil {
			return fmt.Errorf("reading the server namespace's sockets: %w; give -server-port none to wait a fixed -server-wait instead", err)
		}
	}
	s.server = command(s.rec.ServerCommand, s.env)
	s.server.Stdout = prefixed(s.stderr, "server: ")
	s.server.Stderr = s.server.Stdout
	// A process group of its own: signals for overlink's group (a
	// terminal's Ctrl-C, timeout's group kill) reach the server only
	// through overlink, which stops it after the client.
	s.server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.link.Server().Start(s.server); err != nil {
		s.server = nil
		return fmt.Errorf("starting the server command %q: %w", s.rec.ServerCommand, err)
	}
	s.serverDone = make(chan error, 1)
	go func() { s.serverDone <- s.server.Wait() }()
	deadline := time.NewTimer(s.c.serverWait)
	defer deadline.Stop()
	var poll <-chan time.Time
	if !want.none {
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
			if want.none {
				return nil
			}
			if ok, err := look(); ok || err != nil {
				return err
			}
			msg := fmt.Sprintf("the server command did not listen on %s within %v; raise -server-wait, or check the server's output (each line prefixed \"server: \")", want, s.c.serverWait)
			if other := newSockets(socks, before); len(other) > 0 {
				msg += fmt.Sprintf(" and -server-port (it listens on %s)", joinSockets(other))
			} else {
				msg += ", or give -server-port none if it opens no socket"
			}
			return errors.New(msg)
		case sig := <-s.sigs:
			return interrupted{sig.(syscall.Signal), "while the server command was starting"}
		}
	}
}

// listenPoll is how often startServer looks at the server namespace's
// sockets.
const listenPoll = 20 * time.Millisecond

// waitedFor says what startServer was waiting for, for a message.
func waitedFor(w listenWant) string {
	if w.none {
		return "the client command started (-server-port none)"
	}
	return "it listened on " + w.String()
}

// newSockets are the sockets of socks not in before.
func newSockets(socks, before []socket) []socket {
	var out []socket
	for _, s := range socks {
		if !containsSocket(before, s) {
			out = append(out, s)
		}
	}
	return out
}

// joinSockets lists socks for a message.
func joinSockets(socks []socket) string {
	var b strings.Builder
	for i, s := range socks {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// runClient runs the client command to its end, passing signals on to it.
func (s *session) runClient() error {
	qctx, stopQueue := context.WithCancel(context.Background())
	defer stopQueue()
	queueDone := make(chan []shapedlink.QueueSample, 1)
	if s.c.queue {
		go func() {
			q, _ := s.link.Instruments().SampleQueue(qctx, shapedlink.ServerEnd, shapedlink.DefaultSampleInterval)
			queueDone <- q
		}()
	}
	client := command(s.rec.ClientCommand, s.env)
	client.Stdin, client.Stdout, client.Stderr = s.stdin, s.stdout, s.stderr
	s.terminal = sharedTerminal(s.stdin)
	if s.terminal == nil {
		// As the server: only what overlink passes on reaches it.
		client.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	// Sharing the terminal with overlink, it stays in overlink's process
	// group: in the foreground, the terminal's keys (Ctrl-C, Ctrl-\,
	// Ctrl-Z) reach it directly, and job control stops and continues
	// overlink and the client together (fg, bg).
	if err := s.link.Client().Start(client); err != nil {
		return fmt.Errorf("starting %q in the client namespace: %w", s.rec.ClientCommand, err)
	}
	clientDone := make(chan error, 1)
	go func() { clientDone <- client.Wait() }()
	var waitErr error
wait:
	for {
		select {
		case sig := <-s.sigs:
			if !s.terminal.delivers(sig) {
				_ = client.Process.Signal(sig)
			}
		case waitErr = <-clientDone:
			break wait
		}
	}
	s.terminal.reclaim()
	stopQueue()
	if s.c.queue {
		s.rec.Queue = <-queueDone
	}
	s.rec.ExitCode = exitCode(client, waitErr)
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
// -grace or at once when a signal reaches overlink meanwhile. Killing its
// init ends everything the server started.
func (s *session) stopServer() {
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
	case <-time.After(s.c.grace):
		fmt.Fprintf(s.stderr, "overlink: the server command did not stop within %v of SIGTERM; killing it\n", s.c.grace)
	case sig := <-s.sigs:
		fmt.Fprintf(s.stderr, "overlink: %s while the server command was stopping; killing it\n", unix.SignalName(sig.(syscall.Signal)))
	}
	_ = s.server.Process.Kill()
	<-s.serverDone
}
