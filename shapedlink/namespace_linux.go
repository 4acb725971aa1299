package shapedlink

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	"github.com/shakenfist/quicbench/internal/proc"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Namespace is one end of a link: a network namespace, held by a
// descriptor only, or an in-process end for BackendInProcess.
type Namespace struct {
	role string  // "server", "client" or "shaper"
	sim  *simEnd // the in-process end, or nil for a network namespace

	mu     sync.Mutex
	fd     netns.NsHandle
	closed bool
}

// errClosed is returned by methods of a Namespace whose link was closed.
var errClosed = errors.New("shapedlink: the namespace was closed with its link")

// newNamespace creates a fresh network namespace. The calling goroutine's
// thread is not touched: the work is done on a locked thread of its own
// that returns to its original namespace before it is released.
func newNamespace(role string) (*Namespace, error) {
	var h netns.NsHandle
	err := onLockedThread(func() error {
		orig, err := netns.Get()
		if err != nil {
			return fmt.Errorf("shapedlink: reading this thread's network namespace: %w", err)
		}
		defer orig.Close()
		h, err = netns.New() // unshare(CLONE_NEWNET) on this thread, then open it
		if err != nil {
			// The unshare may have succeeded before the open failed;
			// discard the thread rather than find out.
			return errThreadTainted{fmt.Errorf("shapedlink: creating the %s network namespace (unshare CLONE_NEWNET): %w", role, err)}
		}
		if err := netns.Set(orig); err != nil {
			h.Close()
			return errThreadTainted{fmt.Errorf("shapedlink: returning to the original network namespace: %w", err)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Namespace{role: role, fd: h}, nil
}

// errThreadTainted marks an error after which the locked thread may be in
// the wrong namespace; onLockedThread then lets the runtime destroy it.
type errThreadTainted struct{ error }

func (e errThreadTainted) Unwrap() error { return e.error }

// onLockedThread runs fn on a fresh goroutine locked to its OS thread. If fn
// reports that the thread is tainted, the thread stays locked so the runtime
// discards it when the goroutine ends.
func onLockedThread(fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := fn()
		var tainted errThreadTainted
		if !errors.As(err, &tainted) {
			runtime.UnlockOSThread()
		}
		ch <- err
	}()
	return <-ch
}

// nsString names the namespace by role and inode, for logs.
func (n *Namespace) nsString() string {
	ino, err := n.nsInode()
	if err != nil {
		return n.role + " (closed)"
	}
	return fmt.Sprintf("%s net:[%d]", n.role, ino)
}

// nsInode is Inode for a network namespace.
func (n *Namespace) nsInode() (uint64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return 0, errClosed
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(n.fd), &st); err != nil {
		return 0, fmt.Errorf("shapedlink: fstat of the %s namespace: %w", n.role, err)
	}
	return st.Ino, nil
}

// nsDo is Do for a network namespace.
func (n *Namespace) nsDo(fn func() error) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return errClosed
	}
	// Duplicate the descriptor so a concurrent Close cannot pull it away.
	fd, err := unix.FcntlInt(uintptr(n.fd), unix.F_DUPFD_CLOEXEC, 0)
	n.mu.Unlock()
	if err != nil {
		return fmt.Errorf("shapedlink: duplicating the %s namespace descriptor: %w", n.role, err)
	}
	target := netns.NsHandle(fd)
	defer target.Close()

	var fnErr error
	err = onLockedThread(func() error {
		orig, err := netns.Get()
		if err != nil {
			return fmt.Errorf("shapedlink: reading this thread's network namespace: %w", err)
		}
		defer orig.Close()
		if err := netns.Set(target); err != nil {
			return fmt.Errorf("shapedlink: entering the %s namespace (setns): %w", n.role, err)
		}
		fnErr = fn()
		if err := netns.Set(orig); err != nil {
			return errThreadTainted{fmt.Errorf("shapedlink: leaving the %s namespace (setns): %w", n.role, err)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fnErr
}

// nsStart is Start for a network namespace.
func (n *Namespace) nsStart(cmd *exec.Cmd) error {
	fd, err := n.dupFd()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return proc.StartContained(cmd, fd)
}

// startDirect starts cmd inside the namespace in this process's PID
// namespace: for the emulator's shaper, whose real PID is needed.
func (n *Namespace) startDirect(cmd *exec.Cmd) error {
	fd, err := n.dupFd()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return proc.StartInNetns(cmd, fd)
}

// handle opens a route netlink handle inside the namespace. Only
// NETLINK_ROUTE is opened: asking for every family fails with "protocol not
// supported" on minimal kernels.
func (n *Namespace) handle() (*netlink.Handle, error) {
	if n.sim != nil {
		return nil, n.sim.refuse("a netlink handle", "it has no network namespace")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errClosed
	}
	h, err := netlink.NewHandleAt(n.fd, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: opening a netlink handle in the %s namespace: %w", n.role, err)
	}
	return h, nil
}

// dupFd returns a duplicate of the namespace descriptor, for APIs (such as
// nftables) that take a descriptor and may outlive a Close. The caller
// closes it.
func (n *Namespace) dupFd() (int, error) {
	if n.sim != nil {
		return -1, n.sim.refuse("a namespace descriptor", "it has no network namespace")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return -1, errClosed
	}
	fd, err := unix.FcntlInt(uintptr(n.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("shapedlink: duplicating the %s namespace descriptor: %w", n.role, err)
	}
	return fd, nil
}

// close drops this package's reference to the namespace.
func (n *Namespace) close() error {
	if n.sim != nil {
		return nil // the in-process link closes its ends itself
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	return n.fd.Close()
}
