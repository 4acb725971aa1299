// Package proc starts child processes that must die with this process
// (SysProcAttr.Pdeathsig) from one OS thread that lives as long as the
// process.
//
// Linux sends a child's parent-death signal when the thread that forked it
// exits, not when the process does, and os/exec forks from the calling
// thread. The Go runtime ends an OS thread whenever a goroutine finishes
// while locked to it (runtime.LockOSThread without a matching unlock), which
// is what code that switches namespaces does when it cannot, or does not
// want to, put the thread back. An idle thread that once started a child
// can later be picked up by such a goroutine and die with it, and the
// child, perhaps started long ago from unrelated code, is killed at that
// moment. Nothing in a thread's history marks it as having children, so
// the only safe rule is never to start such a child from a thread that may
// ever exit.
//
// Start and StartInNetns therefore hand the command to a goroutine that is
// locked, for the life of the process, to a thread of its own, and call
// cmd.Start there. That goroutine never returns, so the runtime never ends
// its thread. It is created on first use.
//
// Only the start happens there: the caller owns cmd afterwards and waits
// for it as usual, from any goroutine.
//
// A parent-death signal reaches only the child itself: whatever that child
// starts (a shell wrapper's commands, a server that daemonises) lives on
// when this process dies. StartContained closes that gap: it starts the
// command in a new PID namespace under a small init, this same binary
// re-executed (this package's init function turns such a process into the
// init before main runs). The init has the parent-death signal, passes the
// usual termination signals on to the command, reaps orphans and exits
// with the command's status; when it exits, the kernel kills everything
// else in its PID namespace. It needs CAP_SYS_ADMIN (root, or root of a
// user namespace).
package proc
