//go:build unix

package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile is the file inside a work directory that Lock holds.
const LockFile = ".lock"

// errLocked says another process holds a work directory's lock.
var errLocked = errors.New("work directory in use")

// Lock takes an exclusive lock on workdir (flock on workdir/.lock, made if
// need be), so that two commands never write the same runs at once. It does
// not wait: when another process holds the lock, the error wraps errLocked
// and names that process. The lock goes with the process, however it ends;
// release gives it up sooner.
func Lock(workdir string) (release func(), err error) {
	p := filepath.Join(workdir, LockFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results: locking %s: %w", workdir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(p); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("process %d", pid)
			}
		}
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s holds %s; wait for it to finish, or give another work directory", errLocked, holder, p)
		}
		return nil, fmt.Errorf("results: locking %s: %w", p, err)
	}
	// Say who holds it, for the next one to ask.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
