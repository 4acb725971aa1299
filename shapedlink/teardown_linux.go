package shapedlink

import (
	"bytes"
	"os"
	"time"
)

// Close waits for the kernel's worker to tear the link's namespaces down,
// so that the next link does not share a CPU with it (docs/calibration.md,
// "The previous link's teardown").

const (
	teardownStart = 100 * time.Millisecond // for the worker to start
	teardownQuiet = 10 * time.Millisecond  // without it, to count as done
	teardownMax   = 500 * time.Millisecond // the whole wait
	teardownPoll  = 2 * time.Millisecond
)

// awaitNetnsTeardown waits, within the bounds above, until no kernel
// worker is running namespace teardown, having first waited for one to
// start. It returns how long it waited.
func awaitNetnsTeardown() time.Duration {
	w := quietWait{start: teardownStart, quiet: teardownQuiet, limit: teardownMax, poll: teardownPoll,
		now: time.Now, sleep: time.Sleep}
	return w.await(netnsTeardownRunning)
}

// quietWait waits for something to start and then stop.
type quietWait struct {
	start, quiet, limit, poll time.Duration
	now                       func() time.Time
	sleep                     func(time.Duration)
}

// await polls running until it has been true at least once and then
// false for w.quiet; if it is never true within w.start, or the whole
// wait reaches w.limit, it gives up. It returns the time spent.
func (w quietWait) await(running func() bool) time.Duration {
	t0 := w.now()
	seen := false
	var quietSince time.Time
	for {
		now := w.now()
		switch {
		case running():
			seen, quietSince = true, time.Time{}
		case !seen && now.Sub(t0) >= w.start:
			return now.Sub(t0)
		case seen && quietSince.IsZero():
			quietSince = now
		case seen && now.Sub(quietSince) >= w.quiet:
			return now.Sub(t0)
		}
		if now.Sub(t0) >= w.limit {
			return now.Sub(t0)
		}
		w.sleep(w.poll)
	}
}

// netnsTeardownRunning says whether a kernel worker is executing a work
// item of the "netns" workqueue: the kernel names a worker
// "kworker/<pool>+<workqueue>" while it runs that queue's work and
// "...-<workqueue>" once it has finished.
func netnsTeardownRunning() bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	var buf [64]byte
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue // not a process: /proc's other entries start with a letter
		}
		f, err := os.Open("/proc/" + name + "/comm")
		if err != nil {
			continue
		}
		n, _ := f.Read(buf[:])
		f.Close()
		if runningNetnsWork(buf[:n]) {
			return true
		}
	}
	return false
}

// runningNetnsWork reads a task's comm: a kernel worker running the
// netns workqueue's work.
func runningNetnsWork(comm []byte) bool {
	comm = bytes.TrimSpace(comm)
	return bytes.HasPrefix(comm, []byte("kworker/")) && bytes.HasSuffix(comm, []byte("+netns"))
}

// closeNamespaces drops the link's namespaces (none for the in-process
// link), removing the veths first, and waits for the kernel's teardown.
func closeNamespaces(nss ...*Namespace) []error {
	var errs []error
	had := false
	for _, ns := range nss {
		if ns == nil || ns.sim != nil {
			continue
		}
		had = true
		// Remove the link explicitly so it disappears now even if a
		// socket keeps the namespace itself alive.
		if h, err := ns.handle(); err == nil {
			for _, name := range []string{serverDev, clientDev, shaperSideSrv, shaperSideCli} {
				if link, err := h.LinkByName(name); err == nil {
					_ = h.LinkDel(link)
				}
			}
			h.Close()
		}
		if err := ns.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if had {
		// Wait for the kernel's teardown worker (awaitNetnsTeardown).
		awaitNetnsTeardown()
	}
	return errs
}
