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
//
// # The contained program
//
// The init has SIGKILL as its parent-death signal. It forwards SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the program, reaps every
// process orphaned in the namespace, and exits with the program's status;
// daemons that detached themselves die with it. Since the init of a PID
// namespace cannot die of a signal it raises itself, a program killed by
// signal S is reported as having exited with status 128+S, the shell's
// convention. Kill on cmd.Process takes the whole namespace down at once.
//
// The program inherits the init's session and credentials and runs in the
// process group the init was started in: the caller's, unless SysProcAttr
// asks for a new group or session. In the caller's group, the init moves
// itself to a group of its own once the program has started, so a signal
// to that group (a terminal's Ctrl-C, a job-control stop) reaches the
// program once and the init not at all. In a new group the init leads, a
// signal sent to the whole group reaches the program directly and again
// through the init, so signal cmd.Process instead. cmd's fields are as the
// caller set them when StartContained returns.
//
// The binary must be one in which this package's init function runs (any
// binary importing it): the re-executed process becomes the init there,
// before main. The namespace's /proc is not remounted (there is no mount
// namespace): programs inside see the host's /proc, where /proc/self is
// right but /proc/<getpid()> is another process.
package proc
