package proc

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A binary re-executed by StartContained becomes the init of its PID
// namespace here, before main (and before the init functions of packages
// that import this one).
func init() {
	if v, ok := os.LookupEnv(envInit); ok {
		os.Exit(serveInit(v))
	}
}

// forwarded are the signals the init passes on to the program. Others
// never reach the init from outside its namespace unless it handles them
// (the kernel discards them for a namespace's init), except SIGKILL, which
// ends the init and so the whole namespace.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// serveInit is the init: v is envInit's value, the program's arguments
// are this process's own. It returns the init's exit status.
func serveInit(v string) int {
	os.Unsetenv(envInit) // not for the program
	fdText, path, ok := strings.Cut(v, ":")
	fd, err := strconv.Atoi(fdText)
	if !ok || err != nil || fd < 3 || path == "" {
		fmt.Fprintf(os.Stderr, "quicbench-init: %s=%q is not FD:PATH (this variable is set by internal/proc, not by hand)\n", envInit, v)
		return 127
	}
	unix.CloseOnExec(fd) // the program must not hold the status pipe
	status := os.NewFile(uintptr(fd), "quicbench-init-status")
	// Signals are caught before the program starts, so none is lost in
	// between (the runtime would otherwise end this process on SIGINT,
	// SIGTERM or SIGHUP, and with it the namespace).
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i := 3; i < fd; i++ {
		files = append(files, os.NewFile(uintptr(i), "extra-"+strconv.Itoa(i)))
	}
	p, err := os.StartProcess(path, os.Args, &os.ProcAttr{Env: os.Environ(), Files: files})
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			fmt.Fprintf(status, "errno %d", int(errno))
		} else {
			fmt.Fprint(status, err)
		}
		status.Close()
		return 127
	}
	status.Close() // end of file: started
	if unix.Getpgrp() != unix.Getpid() {
		// The program stays in the process group the init was started
		// in (the caller's), where a terminal's keys and job control
		// reach it as they would reach any child of the caller; the init
		// leaves that group, so that it receives only the signals sent
		// to it, and none is passed on a second time.
		_ = unix.Setpgid(0, 0)
	}
	exited := make(chan int, 1)
	go reap(p.Pid, exited)
	for {
		select {
		case s := <-sigs:
			_ = p.Signal(s) // through a pidfd: never a reused PID
		case code := <-exited:
			return code
		}
	}
}

// reap waits for every child of the init, the program and the orphans
// the namespace hands to it, and sends the program's status, as a shell
// reports it, once the program has exited.
func reap(pid int, exited chan<- int) {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: nothing left to wait for, which cannot happen
			// before the program has been reaped; say so rather than
			// wait for ever.
			fmt.Fprintln(os.Stderr, "quicbench-init: waiting for the program:", err)
			exited <- 127
			return
		}
		if got != pid {
			continue
		}
		switch {
		case ws.Signaled():
			exited <- 128 + int(ws.Signal())
		default:
			exited <- ws.ExitStatus()
		}
		return
	}
}
