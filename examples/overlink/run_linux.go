package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Record is what overlink writes on exit.
type Record struct {
	Profile       string    `json:"profile"`
	Backend       string    `json:"backend"`
	Mode          string    `json:"mode"`
	Applied       []string  `json:"applied"`
	ServerCommand []string  `json:"server_command,omitempty"`
	ClientCommand []string  `json:"client_command"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	// ExitCode is the client command's: its exit status, or 128 plus the
	// signal that ended it; -1 when it could not be started.
	ExitCode int `json:"exit_code"`
	// Shaper is the emulator's own account (nil with netem).
	Shaper *shapedlink.ShaperReport `json:"shaper,omitempty"`
	// Egress is each end's egress-hook counters: every packet that left it,
	// and those longer than one wire packet.
	Egress map[string]shapedlink.EgressCounters `json:"egress,omitempty"`
	// Queue is the server end's egress queue, sampled every millisecond
	// (with -queue).
	Queue []shapedlink.QueueSample `json:"queue,omitempty"`
	// LinkError says the link broke while the command ran (the emulator's
	// shaper exited): what the command measured is then not the link's.
	LinkError string `json:"link_error,omitempty"`
	Error     string `json:"error,omitempty"`
}

func overLink(c config, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := shapedlink.Reexec(); err != nil {
		fmt.Fprintln(stderr, "overlink:", err)
		return 1
	}
	// Signals are for the client command: catch them before anything
	// starts, so none ends this process before the link is taken down.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	rec := Record{Profile: c.profile.String(), ClientCommand: clientArgs(c.client), Started: time.Now(), ExitCode: -1}
	if c.server != "" {
		// As documented: through the shell, so quoting and variables such
		// as $QB_SERVER_ADDR work; exec, so that the process overlink
		// starts (and the kernel kills if overlink dies) is the server
		// itself, not a shell that would leave it running.
		rec.ServerCommand = []string{"sh", "-c", "exec " + c.server}
	}
	code := 1
	err := runOverLink(c, &rec, sigs, stdin, stdout, stderr)
	if err != nil {
		rec.Error = err.Error()
		fmt.Fprintln(stderr, "overlink:", err)
	} else {
		code = rec.ExitCode
	}
	rec.Finished = time.Now()
	if c.record != "-" {
		if werr := results.WriteJSON(c.record, rec); werr != nil {
			fmt.Fprintln(stderr, "overlink: writing the record:", werr)
			if code == 0 {
				code = 1
			}
		}
	}
	if rec.LinkError != "" {
		fmt.Fprintln(stderr, "overlink: the link broke while the command ran:", rec.LinkError)
	}
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

func runOverLink(c config, rec *Record, sigs <-chan os.Signal, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx := context.Background()
	link, err := shapedlink.New(ctx, c.profile, shapedlink.Options{Backend: c.backend, Seed: c.seed})
	if err != nil {
		return fmt.Errorf("building the link: %w", err)
	}
	defer link.Close()
	rec.Backend, rec.Mode, rec.Applied = string(link.Backend()), string(link.Mode()), link.Applied()
	env := append(os.Environ(),
		"QB_SERVER_ADDR="+link.ServerAddr().String(),
		"QB_CLIENT_ADDR="+link.ClientAddr().String(),
		"QB_PROFILE="+c.profile.String())

	var server *exec.Cmd
	serverDone := make(chan error, 1)
	if len(rec.ServerCommand) > 0 {
		server = command(rec.ServerCommand, env)
		server.Stdout = prefixed(stderr, "server: ")
		server.Stderr = server.Stdout
		if err := link.Server().Start(server); err != nil {
			return fmt.Errorf("starting the server command %q: %w", rec.ServerCommand, err)
		}
		go func() { serverDone <- server.Wait() }()
		defer stopServer(server, serverDone, c.grace, stderr)
		select {
		case err := <-serverDone:
			serverDone <- err // for stopServer
			return fmt.Errorf("the server command %q ended before the client started: %v", rec.ServerCommand, err)
		case <-time.After(c.serverWait):
		}
	}

	qctx, stopQueue := context.WithCancel(ctx)
	queueDone := make(chan []shapedlink.QueueSample, 1)
	if c.queue {
		go func() {
			s, _ := link.SampleQueue(qctx, shapedlink.ServerEnd, shapedlink.DefaultSampleInterval)
			queueDone <- s
		}()
	}

	client := command(rec.ClientCommand, env)
	client.Stdin, client.Stdout, client.Stderr = stdin, stdout, stderr
	if err := link.Client().Start(client); err != nil {
		stopQueue()
		return fmt.Errorf("starting %q in the client namespace: %w", rec.ClientCommand, err)
	}
	clientDone := make(chan error, 1)
	go func() { clientDone <- client.Wait() }()
	var waitErr error
wait:
	for {
		select {
		case s := <-sigs:
			client.Process.Signal(s)
		case waitErr = <-clientDone:
			break wait
		}
	}
	stopQueue()
	if c.queue {
		rec.Queue = <-queueDone
	}
	rec.ExitCode = exitCode(client, waitErr)

	if err := link.Err(); err != nil {
		rec.LinkError = err.Error()
	}
	if sh, ok := link.ShaperStats(); ok {
		rec.Shaper = &sh
	}
	rec.Egress = map[string]shapedlink.EgressCounters{}
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		if ec, err := link.EgressCounters(e); err == nil {
			rec.Egress[e.String()] = ec
		}
	}
	return nil
}

// command is an exec.Cmd for args that dies with this process.
func command(args []string, env []string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// exitCode is the shell's convention for how cmd ended.
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

// stopServer asks the server command to stop, then kills it after grace.
func stopServer(cmd *exec.Cmd, done <-chan error, grace time.Duration, stderr io.Writer) {
	if cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		fmt.Fprintf(stderr, "overlink: the server command did not stop within %v of SIGTERM; killing it\n", grace)
		cmd.Process.Kill()
		<-done
	}
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
