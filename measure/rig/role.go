package rig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/internal/proc"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// RoleEnv names the two environment variables through which an example
// re-executes itself as one of its roles (a server or a client inside a
// namespace): one holds the role, the other the path of the role's spec.
// Each example uses its own names, so one example's role processes never
// take another's spec for their own.
type RoleEnv struct {
	Role string // e.g. "QUICBENCH_ROLE"; its value is the role's name
	Spec string // e.g. "QUICBENCH_SPEC"; its value is the spec's path
}

// Start re-executes this binary as role inside ns (or, when ns is nil, in
// this process's own network namespace): spec is written to
// dir/<role>-spec.json, the process's output goes to dir/<role>.log, and
// extra become its file descriptors 3, 4, ... (the caller closes its copies
// after Start). When ctx ends the process gets SIGTERM, which lets a role
// end its run cleanly and still write what it measured, and SIGKILL 5 s
// later; it also gets SIGKILL if this process dies first.
func (e RoleEnv) Start(ctx context.Context, ns *shapedlink.Namespace, role string, spec any, dir string, extra ...*os.File) (*exec.Cmd, error) {
	specPath := filepath.Join(dir, role+"-spec.json")
	if err := results.WriteJSON(specPath, spec); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, role+".log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child keeps its own copy
	cmd := exec.CommandContext(ctx, self)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), e.Role+"="+role, e.Spec+"="+specPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The kernel sends Pdeathsig when the thread that forked the child
	// exits, not the process; ns.Start forks from the process's one
	// permanent starter thread (internal/proc), so the signal comes only
	// when this process dies. Never call cmd.Start here directly.
	cmd.SysProcAttr = killWithParent()
	cmd.ExtraFiles = extra
	if ns == nil {
		// A role of a run between two hosts, in this process's own
		// namespace: from the same permanent starter thread, for the
		// same reason.
		if err := proc.Start(cmd); err != nil {
			return nil, fmt.Errorf("starting the %s: %w", role, err)
		}
		return cmd, nil
	}
	if err := ns.Start(cmd); err != nil {
		return nil, fmt.Errorf("starting the %s in its namespace: %w", role, err)
	}
	return cmd, nil
}

// enter tells whether this process was started by Start: it returns the
// role and a logger that names it, with the role's spec read into spec, or
// "" when this process is not a role (the orchestrator). A role whose spec
// cannot be read ends the process with status 2.
func (e RoleEnv) enter(spec any) (string, *slog.Logger) {
	role := os.Getenv(e.Role)
	if role == "" {
		return "", nil
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("role", role)
	if err := results.ReadJSON(os.Getenv(e.Spec), spec); err != nil {
		log.Error("reading the role's spec", "env", e.Spec, "err", err)
		os.Exit(2)
	}
	return role, log
}

// roleContext is what a role runs under: cancelled by SIGINT or SIGTERM
// (how the orchestrator ends a run early) and at deadline.
func roleContext(deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	return ctx, func() { cancel(); stop() }
}

// exitRole writes a role's result to out and ends the process: status 0,
// 1 when the role failed (the result says why), 2 when the result could
// not be written.
func exitRole(out string, res any, failed bool, log *slog.Logger) {
	if err := results.WriteJSON(out, res); err != nil {
		log.Error("writing the result", "path", out, "err", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
	os.Exit(0)
}

// StartServer starts role like Start, with a readiness pipe as its
// descriptor 3, and returns the pipe's read end for WaitReady.
func (e RoleEnv) StartServer(ctx context.Context, ns *shapedlink.Namespace, role string, spec any, dir string) (*exec.Cmd, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd, err := e.Start(ctx, ns, role, spec, dir, w)
	w.Close()
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return cmd, r, nil
}

// StopRole ends a role process that is still running (done not yet
// closed): SIGTERM, on which a role writes what it has, then SIGKILL 5 s
// later. done must be closed when the process has been waited for.
func StopRole(cmd *exec.Cmd, done <-chan struct{}) {
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// readyFD is the pipe on which the server says it is listening.
const readyFD = 3

var errNoResult = errors.New("the process wrote no result")

// ReadResult reads what a role process wrote to path, or says why there is
// none.
func ReadResult[R any](path string) (R, error) {
	var r R
	if err := results.ReadJSON(path, &r); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, errNoResult
		}
		return r, err
	}
	return r, nil
}

// A roleJob is a role's spec: it says when the role must be done and where
// its result goes.
type roleJob interface {
	roleDeadline() time.Time
	resultPath() string
}

// ServeRole must be called first thing in main (and TestMain). In a
// process started as one of env's roles it reads the spec, runs the role's
// job (jobs[role]) until the spec's deadline or SIGTERM, lets finish fill
// in the result's role and error, writes the result and exits; otherwise
// it returns at once.
func ServeRole[S roleJob, R any](env RoleEnv, jobs map[string]func(context.Context, S, *slog.Logger) (R, error),
	finish func(role string, res *R, err error, log *slog.Logger)) {
	var spec S
	role, log := env.enter(&spec)
	if role == "" {
		return
	}
	ctx, cancel := roleContext(spec.roleDeadline())
	defer cancel()
	var res R
	var err error
	if job, ok := jobs[role]; ok {
		res, err = job(ctx, spec, log)
	} else {
		err = fmt.Errorf("unknown %s %q", env.Role, role)
	}
	finish(role, &res, err, log)
	cancel()
	exitRole(spec.resultPath(), res, err != nil, log)
}

// SignalReady tells the orchestrator that the server is listening, on the
// readiness pipe rig.StartServer gave it, with its addresses.
func SignalReady(addrs ...any) {
	if ready := os.NewFile(readyFD, "ready"); ready != nil {
		fmt.Fprintln(ready, addrs...)
		ready.Close()
	}
}
