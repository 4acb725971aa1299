package proc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// envInit, in a re-executed binary's environment, makes it the init of a
// PID namespace (see init_linux.go). Its value is "FD:PATH": the status
// pipe's descriptor number and the command's path.
const envInit = "QUICBENCH_PROC_INIT"

// StartContained starts cmd inside the network namespace netnsFD refers to
// (or, with netnsFD -1, in this process's own), from the permanent starter
// thread, in a new PID namespace of its own under a small init process
// (this binary, re-executed) that dies with this process and takes every
// process in the namespace with it. cmd.Process, cmd.Wait and
// cmd.ProcessState are the init's; a program killed by signal S exits
// 128+S. SysProcAttr applies to the init, with Pdeathsig SIGKILL and
// CLONE_NEWPID added. Stdin, Stdout, Stderr, ExtraFiles, Env and Dir reach
// the program, and an error starting it is returned as cmd.Start returns
// it. The package comment has the signals, process groups and /proc.
func StartContained(cmd *exec.Cmd, netnsFD int) error {
	if cmd.Process != nil {
		return errors.New("exec: already started")
	}
	if cmd.Err != nil {
		return cmd.Err // exec.Command's failed lookup, as cmd.Start returns it
	}
	if cmd.Path == "" {
		return errors.New("exec: no command")
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("proc: a status pipe for the PID namespace's init: %w", err)
	}
	defer statusR.Close()
	restore := asInit(cmd, statusW)
	if netnsFD < 0 {
		err = Start(cmd)
	} else {
		err = StartInNetns(cmd, netnsFD)
	}
	restore()
	statusW.Close()
	if err != nil {
		return fmt.Errorf("proc: starting the init of a new PID namespace for %s: %w", cmd.Path, err)
	}
	// The init closes the pipe once the program has started (end of
	// file), or writes why it could not start it first. Either way the
	// read ends: the pipe closes when the init exits, and the init dies
	// with this process.
	status, rerr := io.ReadAll(statusR)
	if rerr == nil && len(status) == 0 {
		return nil
	}
	_ = cmd.Wait() // the init exits at once after a failed start
	if rerr != nil {
		return fmt.Errorf("proc: reading the PID namespace init's status: %w", rerr)
	}
	return startError(cmd.Path, string(status))
}

// asInit turns cmd into the start of an init that will run cmd's program,
// with statusW as the init's status pipe, and returns the function that
// puts cmd's fields back.
func asInit(cmd *exec.Cmd, statusW *os.File) (restore func()) {
	path, args, env, extra, sys := cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr
	if len(args) == 0 {
		cmd.Args = []string{path}
	}
	// The status pipe follows the caller's extra files, so those keep
	// their numbers (3, 4, ...) in the init and in the program.
	statusFD := 3 + len(extra)
	cmd.Env = append(cmd.Environ(), envInit+"="+strconv.Itoa(statusFD)+":"+path)
	cmd.ExtraFiles = append(extra[:len(extra):len(extra)], statusW)
	var attr syscall.SysProcAttr
	if sys != nil {
		attr = *sys
	}
	attr.Cloneflags |= syscall.CLONE_NEWPID
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = &attr
	cmd.Path = "/proc/self/exe"
	return func() {
		cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr = path, args, env, extra, sys
	}
}

// startError rebuilds the error the init reported: "errno N" as the
// *fs.PathError cmd.Start returns for a failed exec, anything else as
// text.
func startError(path, status string) error {
	if s, ok := strings.CutPrefix(status, "errno "); ok {
		if n, err := strconv.Atoi(s); err == nil {
			return &fs.PathError{Op: "fork/exec", Path: path, Err: syscall.Errno(n)}
		}
	}
	return fmt.Errorf("proc: the PID namespace's init could not start %s: %s", path, status)
}
