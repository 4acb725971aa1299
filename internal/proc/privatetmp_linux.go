package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// StartPrivateTmp starts cmd in a mount namespace of its own whose /tmp is
// an empty tmpfs: what cmd leaves there (an X server's socket and lock
// files) is seen by no other process and goes with the namespace when cmd
// and its children end, however they end. The directories in keep that
// lie under /tmp are mounted back at their places, so that paths cmd is
// given there still work.
//
// cmd is started from a thread of its own, locked to the namespace, which
// lives until release is called: call it once cmd has been waited for
// (the thread's exit would send cmd its parent-death signal). It needs
// CAP_SYS_ADMIN (root, or root of a user namespace).
func StartPrivateTmp(cmd *exec.Cmd, keep ...string) (release func(), err error) {
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Never unlocked: the runtime ends the thread, and the namespace
		// changes with it, when this goroutine returns.
		runtime.LockOSThread()
		err := privateTmp(keep)
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err == nil {
			<-done
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, nil
}

// privateTmp moves the calling thread into a mount namespace of its own,
// with nothing propagating back, mounts a tmpfs on /tmp there and mounts
// each directory of keep under /tmp back at its place.
func privateTmp(keep []string) error {
	var dirs []string
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("proc: a mount namespace for a private /tmp (unshare): %w", err)
	}
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("proc: making the private /tmp's mounts private: %w", err)
	}
	// Opened in the new namespace: a bind mount takes its source from
	// the caller's own namespace only.
	for _, k := range keep {
		abs, err := filepath.Abs(k)
		if err != nil {
			return fmt.Errorf("proc: %s: %w", k, err)
		}
		if !strings.HasPrefix(abs, "/tmp/") {
			continue
		}
		fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("proc: opening %s to keep it in the private /tmp: %w", abs, err)
		}
		dirs, fds = append(dirs, abs), append(fds, fd)
	}
	if err := unix.Mount("quicbench-tmp", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("proc: mounting a tmpfs on /tmp: %w", err)
	}
	for i, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("proc: keeping %s in the private /tmp: %w", d, err)
		}
		if err := unix.Mount(fmt.Sprintf("/proc/thread-self/fd/%d", fds[i]), d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("proc: keeping %s in the private /tmp (bind mount): %w", d, err)
		}
	}
	return nil
}
