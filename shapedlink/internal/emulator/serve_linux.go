package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"golang.org/x/sys/unix"
)

// This file is the shaper process's entry and life cycle: MaybeServe,
// reading the configuration, opening the sockets and starting one
// forwarding thread per direction, waiting for a signal or end of file,
// and the exit status. The sockets are in sockets_linux.go and the
// forwarding loop in forward_linux.go.

// MaybeServe turns this process into the shaper if it was started by a
// command from Command (envConfig is set), or into the keep-awake
// process if by one from AwakeCommand (envAwake is set), and never
// returns in those cases: it exits 0 when stopped (SIGTERM, SIGINT, end
// of file on standard input) and non-zero on failure, after writing the
// reason to standard error (and, the shaper, to the shared page). In any
// other process it returns at once and does nothing. Call it from an
// init function (shapedlink does) or first thing in main or TestMain.
func MaybeServe() {
	if v, ok := os.LookupEnv(envAwake); ok {
		os.Exit(serveAwake(v))
	}
	v, ok := os.LookupEnv(envConfig)
	if !ok {
		return
	}
	os.Exit(serve(v))
}

// shaper is the shaper process's state from setup to teardown.
type shaper struct {
	lay   *shmLayout
	cfg   Config
	wake  int        // eventfd that ends the forwarding threads' sleep; -1 until made
	fds   []int      // the packet sockets opened so far
	loops []*dirLoop // the directions set up so far, AToB first
	stop  atomic.Bool
}

// serve runs the shaper with v, the configuration from envConfig, and
// returns the process's exit status: 0 when stopped, 1 on a failure
// reported on the shared page, 2 when there is no usable shared page.
func serve(v string) int {
	mem, lay, err := mapShared(3)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quicbench-shaper:", err)
		return 2
	}
	defer unix.Munmap(mem)
	if lay.magic.Load() != shmMagic {
		fmt.Fprintln(os.Stderr, "quicbench-shaper: file descriptor 3 is not the emulator's shared page")
		return 2
	}
	os.Unsetenv(envConfig) // nothing this process starts should become a shaper
	if v == configFromFD {
		f := os.NewFile(4, "quicbench-emulator-config")
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "quicbench-shaper: reading the configuration from file descriptor 4:", err)
			return 2
		}
		v = string(b)
	}
	s := &shaper{lay: lay, wake: -1}
	defer s.teardown()
	if err := s.setup(v); err != nil {
		return s.fail(err)
	}
	if err := s.run(); err != nil {
		return s.fail(err)
	}
	lay.state.Store(stateStopped)
	return 0
}

// fail reports err on the shared page and standard error and returns the
// exit status for a failure.
func (s *shaper) fail(err error) int {
	s.lay.setError(err.Error())
	fmt.Fprintln(os.Stderr, "quicbench-shaper:", err)
	return 1
}

// setup reads the configuration, opens both interfaces' sockets and
// prepares both directions; teardown releases whatever it got to.
func (s *shaper) setup(v string) error {
	cc, err := decodeConfig(v)
	if err != nil {
		return err
	}
	cfg := cc.Config
	s.cfg = cfg
	// Pdeathsig was set by the parent's fork; if the parent died before
	// that took effect we have been re-parented and must not linger.
	if cc.ParentPID != 0 && os.Getppid() != cc.ParentPID {
		return fmt.Errorf("the parent process %d is gone", cc.ParentPID)
	}
	s.lay.pid.Store(uint64(os.Getpid()))
	// Each forwarding thread holds a P while it spins; leave room for the
	// runtime's own goroutines so a spinning loop never waits for a P.
	runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))

	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	s.wake = wake
	// Ready must mean "frames get through": wait for both interfaces to
	// be up with carrier (IFF_RUNNING, which the kernel sets only after it
	// has activated the device's qdisc; before that, frames are dropped).
	for _, name := range []string{cfg.IfA, cfg.IfB} {
		if err := waitRunning(name, 5*time.Second); err != nil {
			return err
		}
	}
	rxA, txA, err := s.openInterface(cfg.IfA)
	if err != nil {
		return err
	}
	rxB, txB, err := s.openInterface(cfg.IfB)
	if err != nil {
		return err
	}
	if err := s.newLoops([2]int{rxA, rxB}, [2]int{txA, txB}); err != nil {
		return err
	}
	// Best effort: a page fault on the forwarding path (a reclaimed page
	// of the program or a buffer) is a stall; Monitor.Priority reports
	// the outcome.
	var bufs [][]byte
	for _, l := range s.loops {
		bufs = append(bufs, l.arena, l.txScratch)
	}
	mode, errno := lockMemory(bufs)
	s.lay.mlockMode.Store(mode)
	s.lay.mlockErr.Store(uint64(errno))
	return nil
}

// decodeConfig parses and validates the configuration from envConfig.
func decodeConfig(v string) (childConfig, error) {
	var cc childConfig
	if err := json.Unmarshal([]byte(v), &cc); err != nil {
		return cc, fmt.Errorf("decoding %s: %w", envConfig, err)
	}
	if err := cc.Config.validate(); err != nil {
		return cc, err
	}
	return cc, nil
}

// newLoops prepares the AToB direction (from IfA's receive socket to IfB's
// send socket) and the BToA direction (the mirror); rx and tx are indexed
// by interface, A first.
func (s *shaper) newLoops(rx, tx [2]int) error {
	spin := s.cfg.SpinThreshold
	if spin == 0 {
		spin = defaultSpinThreshold
	}
	base := time.Now()
	s.lay.base.Store(uint64(base.UnixNano()))
	for i, p := range []struct {
		d      linkspec.Direction
		rx, tx int
	}{{s.cfg.AToB, rx[0], tx[1]}, {s.cfg.BToA, rx[1], tx[0]}} {
		l, err := newDirLoop(p.d, s.cfg.KeepOffload, p.rx, p.tx, s.wake, &s.lay.dirs[i], &s.stop, int64(spin), base)
		if err != nil {
			return err
		}
		l.window = int64(s.cfg.DepartureWindow)
		// Record the buffers as the kernel applied them: without
		// privilege in the initial namespace the forced sizes fall back
		// to the host limits.
		if err := l.recordBuffers(); err != nil {
			return err
		}
		s.loops = append(s.loops, l)
		if s.cfg.LateMarker > 0 {
			fd, err := unix.Open(traceMarker, unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("opening the trace marker %s for LateMarker (is tracefs mounted there?): %w", traceMarker, err)
			}
			l.marker, l.markLate = fd, int64(s.cfg.LateMarker)
		}
	}
	return nil
}

// run starts both forwarding threads, marks the shaper ready, and waits
// for a signal, end of file on standard input, or a forwarding error,
// which it returns once the threads have stopped (or 2 s have passed).
func (s *shaper) run() error {
	// Priority for every thread of the process, not just the forwarding
	// ones: when the runtime preempts a locked goroutine, another runtime
	// thread has to hand it back its P, and on a busy machine a
	// normal-priority helper thread waits milliseconds for a CPU. Threads
	// created later inherit the policy and nice value of their creator.
	applyPriority(s.cfg, s.lay)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	eof := stdinClosed()
	errc := make(chan error, 2)
	// No collection while forwarding: its stop-the-world would hold a
	// forwarding thread back as it returns from a system call.
	quietRuntime()
	gc := newGCWatch()
	s.publishGC(gc)
	var wg sync.WaitGroup
	s.startLoops(&wg, errc)
	applyPriority(s.cfg, s.lay) // and any thread started meanwhile
	s.lay.state.Store(stateReady)

	tick := time.NewTicker(gcPublishEvery)
	defer tick.Stop()
	var runErr error
wait:
	for {
		select {
		case <-sigs:
			break wait
		case <-eof:
			break wait
		case runErr = <-errc:
			break wait
		case <-tick.C:
			s.publishGC(gc)
		}
	}
	s.stopLoops(&wg)
	s.publishGC(gc)
	return runErr
}

// gcPublishEvery is how often the shaper publishes its collector's
// record.
const gcPublishEvery = 100 * time.Millisecond

// publishGC stores the collector's record since forwarding started on
// the shared page.
func (s *shaper) publishGC(w *gcWatch) {
	cycles, pause := w.read()
	s.lay.gcCycles.Store(cycles)
	s.lay.gcPauseMaxNs.Store(pause)
	s.lay.gcValid.Store(1)
}

// stdinClosed returns a channel that is closed at end of file on standard
// input: the parent process died or called Stop.
func stdinClosed() <-chan struct{} {
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	return eof
}

// startLoops runs each direction on its own locked OS thread and returns
// once every thread is locked and has its timer slack set. A loop's error
// goes to errc; wg is done when every loop has returned.
func (s *shaper) startLoops(wg *sync.WaitGroup, errc chan<- error) {
	var started sync.WaitGroup
	started.Add(len(s.loops))
	for _, l := range s.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The thread is never unlocked: it exits with the goroutine,
			// taking its timer slack setting with it.
			runtime.LockOSThread()
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
			started.Done()
			if err := l.run(); err != nil {
				errc <- err
			}
		}()
	}
	started.Wait()
}

// stopLoops tells the loops to stop, wakes any that sleep, and waits for
// them for at most 2 s.
func (s *shaper) stopLoops(wg *sync.WaitGroup) {
	s.stop.Store(true)
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(s.wake, one[:])
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Second):
	}
}

// teardown releases the frame buffers, the sockets and the eventfd, in
// the reverse order of setup.
func (s *shaper) teardown() {
	for i := len(s.loops) - 1; i >= 0; i-- {
		s.loops[i].close()
	}
	for _, fd := range s.fds {
		unix.Close(fd)
	}
	if s.wake >= 0 {
		unix.Close(s.wake)
	}
}

func applyPriority(cfg Config, lay *shmLayout) {
	if cfg.NormalPriority && cfg.Nice == 0 {
		return
	}
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		lay.niceErr.Store(uint64(unix.ENOENT))
		lay.rtErr.Store(uint64(unix.ENOENT))
		return
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cfg.Nice != 0 {
			// PRIO_PROCESS with a thread id sets that thread's nice.
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, cfg.Nice); err != nil {
				lay.niceErr.Store(uint64(err.(syscall.Errno)))
			}
		}
		if !cfg.NormalPriority {
			prio := int32(1) // struct sched_param
			if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), unix.SCHED_FIFO, uintptr(unsafe.Pointer(&prio))); e != 0 {
				lay.rtErr.Store(uint64(e))
			}
		}
	}
}
