//go:build unix

package main

import (
	"os"
	"syscall"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

// releasePipe opens the pipe p for writing and closes it, so a reader
// blocked opening it goes on (and reads nothing).
func releasePipe(p string) {
	if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
}
