package quinncarrier

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// startHere starts cmd in the calling thread's network namespace so that
// it dies with this process.
func startHere(cmd *exec.Cmd, done <-chan struct{}) error {
	runtime.LockOSThread()
	ns, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("reading this thread's network namespace: %w", err)
	}
	defer unix.Close(ns)
	return startIn(cmd, ns, done)
}

// startIn starts cmd in the network namespace ns (a descriptor), dying
// with this process: Pdeathsig fires when the starting thread ends, so the
// start is made on a thread of its own, locked to a goroutine that waits
// until done closes (the end has exited) and then lets the thread end
// with it.
func startIn(cmd *exec.Cmd, ns int, done <-chan struct{}) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine.
		runtime.LockOSThread()
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			started <- fmt.Errorf("entering the network namespace: %w", err)
			return
		}
		err := cmd.Start()
		started <- err
		if err == nil {
			<-done
		}
	}()
	return <-started
}

// SocketNamespace is the network namespace of a socket (such as one a
// transport.Options hook made), where StartServer and StartClient can
// start an end.
type SocketNamespace struct{ fd int }

// NamespaceOf returns a SocketNamespace for conn's network namespace.
// Close it when no more ends are to be started.
func NamespaceOf(conn syscall.Conn) (*SocketNamespace, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	ns := -1
	var ierr error
	if err := rc.Control(func(fd uintptr) { ns, ierr = unix.IoctlRetInt(int(fd), unix.SIOCGSKNS) }); err != nil {
		return nil, err
	}
	if ierr != nil {
		return nil, fmt.Errorf("quinncarrier: a socket's network namespace (SIOCGSKNS): %w", ierr)
	}
	unix.CloseOnExec(ns)
	return &SocketNamespace{fd: ns}, nil
}

// Close releases the namespace's descriptor.
func (s *SocketNamespace) Close() error {
	if s.fd < 0 {
		return errors.New("quinncarrier: SocketNamespace closed twice")
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}

// start starts cmd in the namespace (nil: the calling thread's).
func (s *SocketNamespace) start(cmd *exec.Cmd, done <-chan struct{}) error {
	if s == nil {
		return startHere(cmd, done)
	}
	if s.fd < 0 {
		return errors.New("quinncarrier: the SocketNamespace is closed")
	}
	return startIn(cmd, s.fd, done)
}

// nsStarter starts through SocketNamespace.start; its Start is not used.
type nsStarter struct{ *SocketNamespace }

func (n nsStarter) Start(cmd *exec.Cmd) error { return n.start(cmd, nil) }
