//go:build unix

package results

import "syscall"

// openNoWait makes an open return at once whatever the file is: a named
// pipe with no writer would otherwise block it, and a terminal would
// become the process's controlling terminal.
const openNoWait = syscall.O_NONBLOCK | syscall.O_NOCTTY
