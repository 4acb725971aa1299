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
package proc
