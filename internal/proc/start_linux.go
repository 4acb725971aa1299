package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// request asks the starter thread to start cmd, inside the network
// namespace netnsFD refers to when netnsFD >= 0.
type request struct {
	cmd     *exec.Cmd
	netnsFD int
	done    chan error
}

var (
	mu      sync.Mutex
	current *starter
)

// starter is one permanent thread that starts commands.
type starter struct {
	reqs chan request
	tid  int
}

// Start starts cmd from the process's permanent starter thread, in the
// network namespace that thread was created in (the process's own).
func Start(cmd *exec.Cmd) error {
	return get().do(request{cmd: cmd, netnsFD: -1})
}

// StartInNetns starts cmd inside the network namespace netnsFD refers to
// (an open descriptor of /proc/PID/ns/net or a namespace file): the starter
// thread enters the namespace with setns, starts cmd, so the child is born
// there, and returns to its own namespace. The descriptor stays the
// caller's and must stay open until StartInNetns returns.
func StartInNetns(cmd *exec.Cmd, netnsFD int) error {
	if netnsFD < 0 {
		return fmt.Errorf("proc: invalid network namespace descriptor %d", netnsFD)
	}
	return get().do(request{cmd: cmd, netnsFD: netnsFD})
}

// threadID returns the kernel thread id of the starter thread, starting it
// if need be: the thread every child started by this package has as its
// parent.
func threadID() int { return get().tid }

func get() *starter {
	mu.Lock()
	defer mu.Unlock()
	if current == nil {
		s := &starter{reqs: make(chan request)}
		up := make(chan int)
		go s.serve(up)
		s.tid = <-up
		current = s
	}
	return current
}

// retire makes s unavailable to later calls; a new starter is created for
// the next one.
func retire(s *starter) {
	mu.Lock()
	defer mu.Unlock()
	if current == s {
		current = nil
	}
}

func (s *starter) do(r request) error {
	r.done = make(chan error, 1)
	s.reqs <- r
	return <-r.done
}

// serve runs on its own locked thread forever. It never unlocks the thread
// and never returns: if it did, the runtime would end the thread and the
// kernel would kill every child started from it.
func (s *starter) serve(up chan<- int) {
	runtime.LockOSThread()
	// home is the namespace to return to after a start in another one.
	home, homeErr := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	up <- unix.Gettid()
	for r := range s.reqs {
		if r.netnsFD < 0 {
			r.done <- r.cmd.Start()
			continue
		}
		if homeErr != nil {
			r.done <- fmt.Errorf("proc: cannot start a command in another network namespace: opening the starter thread's own namespace: %w", homeErr)
			continue
		}
		if err := unix.Setns(r.netnsFD, unix.CLONE_NEWNET); err != nil {
			r.done <- fmt.Errorf("proc: entering the network namespace (setns): %w", err)
			continue
		}
		startErr := r.cmd.Start()
		if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
			// The thread is stuck in the other namespace. It must not
			// start anything else, and it must not exit either (a child
			// may have just been started from it): park it for good and
			// let the next call create a new starter.
			retire(s)
			r.done <- errors.Join(startErr, fmt.Errorf("proc: the starter thread could not return to its own network namespace and was retired: %w", err))
			s.park()
		}
		r.done <- startErr
	}
}

// park blocks forever, keeping the locked thread alive; it answers any
// request that was already on its way with an error.
func (s *starter) park() {
	for r := range s.reqs {
		r.done <- errors.New("proc: the starter thread was retired")
	}
}
