package overlink

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// terminal is the caller's controlling terminal when its standard input is
// that terminal: the client command then shares it, and the caller's process
// group, as any program run from a shell does.
type terminal struct {
	fd         int
	pgrp       int  // the caller's process group
	foreground bool // whether that group was the terminal's foreground at the start
}

// sharedTerminal returns stdin's terminal if it is the caller's controlling
// terminal, or nil.
func sharedTerminal(stdin io.Reader) *terminal {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil
	}
	fd := int(f.Fd())
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP) // fails unless it is our controlling terminal
	if err != nil {
		return nil
	}
	return &terminal{fd: fd, pgrp: unix.Getpgrp(), foreground: fg == unix.Getpgrp()}
}

// delivers says whether the terminal itself delivered sig to the client as
// well: Ctrl-C, Ctrl-\ and a hangup go to the whole foreground process
// group, the client included, so Run passing them on would deliver
// them twice.
func (t *terminal) delivers(sig os.Signal) bool {
	if t == nil || (sig != syscall.SIGINT && sig != syscall.SIGQUIT && sig != syscall.SIGHUP) {
		return false
	}
	fg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	return err == nil && fg == t.pgrp
}

// reclaim makes the caller's process group the terminal's foreground again
// if it was at the start and the client moved it (an interactive shell
// takes the foreground for its own group and, seeing from its PID
// namespace no group to give it back to, leaves it there when it exits).
func (t *terminal) reclaim() {
	if t == nil || !t.foreground {
		return
	}
	if fg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP); err != nil || fg == t.pgrp {
		return
	}
	// From the background, setting the foreground raises SIGTTOU unless
	// it is ignored.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, t.pgrp)
}
