package emulator

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"golang.org/x/sys/unix"
)

// envConfig is the environment variable that marks a process as the
// shaper and carries its configuration as JSON.
const envConfig = "QUICBENCH_EMULATOR_CONFIG"

// childConfig is what the parent passes in envConfig.
type childConfig struct {
	Config    Config
	ParentPID int
}

// Command prepares the shaper process for cfg: /proc/self/exe re-executed
// with envConfig set, cfg as JSON in file descriptor 4, the shared
// counters as file descriptor 3 and a pipe on standard input. It does not start it; the caller starts
// the returned command inside the shaper network namespace (see the
// package doc) and then uses the Monitor. Seeds that are zero in cfg are
// drawn at random here and reported by Monitor.Seeds.
func Command(cfg Config) (*exec.Cmd, *Monitor, error) {
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	for _, d := range []*linkspec.Direction{&cfg.AToB, &cfg.BToA} {
		for d.Seed == 0 {
			var b [8]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, nil, fmt.Errorf("emulator: drawing a loss seed: %w", err)
			}
			d.Seed = binary.LittleEndian.Uint64(b[:])
		}
	}
	env, err := json.Marshal(childConfig{Config: cfg, ParentPID: os.Getpid()})
	if err != nil {
		return nil, nil, fmt.Errorf("emulator: encoding the shaper configuration: %w", err)
	}
	// The configuration travels in a memfd (file descriptor 4): a trace
	// or a schedule can be far longer than an environment variable may be.
	cfgf, err := configFile(env)
	if err != nil {
		return nil, nil, err
	}
	memf, mem, lay, err := newSharedPage()
	if err != nil {
		cfgf.Close()
		return nil, nil, err
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		unix.Munmap(mem)
		memf.Close()
		cfgf.Close()
		return nil, nil, fmt.Errorf("emulator: pipe for the shaper's standard input: %w", err)
	}
	m := &Monitor{cfg: cfg, mem: mem, lay: lay, memf: memf, cfgf: cfgf, stdinR: stdinR, stdinW: stdinW, done: make(chan struct{})}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"quicbench-shaper"}
	cmd.Env = append(os.Environ(), envConfig+"="+configFromFD)
	cmd.Stdin = stdinR
	cmd.Stderr = &m.stderr
	cmd.ExtraFiles = []*os.File{memf, cfgf}
	// A process group of its own: the shaper stops on SIGINT, and must
	// not take a terminal's Ctrl-C (sent to the whole foreground group)
	// meant for a program running over the link.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	m.cmd = cmd
	return cmd, m, nil
}

// Monitor watches and stops one shaper process prepared by Command.
type Monitor struct {
	cfg    Config
	cmd    *exec.Cmd
	stderr tailBuffer

	mu      sync.Mutex
	base    time.Time // ScheduleBase, kept once read
	mem     []byte    // nil after Stop
	lay     *shmLayout
	final   [2]linkspec.Counters
	finalGC gcRecord
	memf    *os.File
	cfgf    *os.File
	stdinR  *os.File
	stdinW  *os.File

	waitOnce sync.Once
	done     chan struct{}
	waitErr  error
	stopped  bool
}

// Seeds returns the loss seeds in use: [0] for AToB, [1] for BToA.
func (m *Monitor) Seeds() [2]uint64 { return [2]uint64{m.cfg.AToB.Seed, m.cfg.BToA.Seed} }

// Config returns the configuration in force, with the seeds filled in.
func (m *Monitor) Config() Config { return m.cfg }

// Describe returns one tc-like line per direction, [0] AToB and [1] BToA,
// e.g. "emulator delay 40ms rate 10Mbit limit 110 loss 1% seed 7".
func (m *Monitor) Describe() [2]string {
	return [2]string{describe(m.cfg.AToB), describe(m.cfg.BToA)}
}

// Snapshot returns the current counters, [0] for AToB and [1] for BToA.
// It makes no system call. After Stop it returns the final counters.
func (m *Monitor) Snapshot() [2]linkspec.Counters {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lay == nil {
		return m.final
	}
	return [2]linkspec.Counters{m.lay.dirs[0].load(), m.lay.dirs[1].load()}
}

// ScheduleBase is the shaper's time zero, from which its schedules and
// traces count: set when the forwarding threads are prepared, before
// Ready returns. It is the zero Time before that.
func (m *Monitor) ScheduleBase() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lay == nil {
		return m.base
	}
	if ns := m.lay.base.Load(); ns != 0 {
		m.base = time.Unix(0, int64(ns))
	}
	return m.base
}

// Flows returns direction dir's (0 AToB, 1 BToA) fullest flow queues as
// the shaper last published them (every 2 ms, at most flowSamples, by
// bytes held, fullest first), stored in dst[:0]. It is empty without
// FQ-CoDel, and ok is false when the shaper was writing throughout the
// read (rare; try again).
func (m *Monitor) Flows(dir int, dst []aqm.FlowBacklog) (fl []aqm.FlowBacklog, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lay == nil || dir < 0 || dir > 1 {
		return dst[:0], true
	}
	return m.lay.dirs[dir].loadFlows(dst)
}

// Priority describes the forwarding threads' scheduling priority as
// applied, e.g. "nice -10", or "nice 0 (asked for -10: permission
// denied)". Call it after Ready.
func (m *Monitor) Priority() string {
	m.mu.Lock()
	lay := m.lay
	m.mu.Unlock()
	var parts []string
	if !m.cfg.NormalPriority {
		if e := loadErrno(lay, func(l *shmLayout) uint64 { return l.rtErr.Load() }); e != 0 {
			parts = append(parts, fmt.Sprintf("SCHED_OTHER (asked for SCHED_FIFO 1: %v)", e))
		} else {
			parts = append(parts, "SCHED_FIFO 1")
		}
	}
	switch {
	case m.cfg.Nice == 0:
		parts = append(parts, "nice 0 (inherited)")
	default:
		if e := loadErrno(lay, func(l *shmLayout) uint64 { return l.niceErr.Load() }); e != 0 {
			parts = append(parts, fmt.Sprintf("nice inherited (asked for %d: %v)", m.cfg.Nice, e))
		} else {
			parts = append(parts, fmt.Sprintf("nice %d", m.cfg.Nice))
		}
	}
	if lay != nil {
		switch lay.mlockMode.Load() {
		case mlockAll:
			parts = append(parts, "memory locked")
		case mlockFaults:
			parts = append(parts, "memory locked as touched")
		default:
			parts = append(parts, fmt.Sprintf("memory not locked (mlockall: %v)", syscall.Errno(lay.mlockErr.Load())))
		}
	}
	return strings.Join(parts, ", ")
}

// gcRecord is the shaper's garbage collection since it started
// forwarding.
type gcRecord struct {
	cycles   uint64
	pauseMax time.Duration
	ok       bool
}

func loadGC(lay *shmLayout) gcRecord {
	if lay.gcValid.Load() == 0 {
		return gcRecord{}
	}
	return gcRecord{cycles: lay.gcCycles.Load(), pauseMax: time.Duration(lay.gcPauseMaxNs.Load()), ok: true}
}

// GC returns how many garbage collections the shaper has run since it
// started forwarding and the longest pause of any (an upper bound, from
// the runtime's pause histogram), as it last published them (every
// 100 ms, and when it stops); ok is false before it has. The shaper
// turns its collector off once it forwards, so both should stay zero.
// After Stop it returns the final record.
func (m *Monitor) GC() (cycles uint64, pauseMax time.Duration, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.finalGC
	if m.lay != nil {
		r = loadGC(m.lay)
	}
	return r.cycles, r.pauseMax, r.ok
}

func loadErrno(lay *shmLayout, f func(*shmLayout) uint64) syscall.Errno {
	if lay == nil {
		return 0
	}
	return syscall.Errno(f(lay))
}

// PID returns the shaper's process id, or 0 if it has not been started.
func (m *Monitor) PID() int {
	if m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

func (m *Monitor) startWaiter() error {
	if m.cmd.Process == nil {
		return errors.New("emulator: the shaper command has not been started; call cmd.Start (inside the shaper namespace) first")
	}
	m.waitOnce.Do(func() {
		// The child holds its own copies now.
		m.stdinR.Close()
		go func() {
			m.waitErr = m.cmd.Wait()
			close(m.done)
		}()
	})
	return nil
}

// Ready waits until the shaper has opened its sockets and is forwarding,
// or reports why it will not (its own error message, or how it exited).
func (m *Monitor) Ready(ctx context.Context) error {
	if err := m.startWaiter(); err != nil {
		return err
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		m.mu.Lock()
		lay := m.lay
		m.mu.Unlock()
		if lay == nil {
			return errors.New("emulator: the monitor was stopped")
		}
		switch lay.state.Load() {
		case stateReady:
			return nil
		case stateFailed:
			return fmt.Errorf("emulator: the shaper failed: %s", lay.errorText())
		}
		select {
		case <-m.done:
			if lay.state.Load() == stateFailed {
				return fmt.Errorf("emulator: the shaper failed: %s", lay.errorText())
			}
			return fmt.Errorf("emulator: the shaper exited before it was ready (%v); its stderr: %q", m.waitErr, m.stderr.String())
		case <-ctx.Done():
			return fmt.Errorf("emulator: waiting for the shaper to be ready: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Exited is closed when the shaper process has exited (after Ready or Stop
// has been called at least once).
func (m *Monitor) Exited() <-chan struct{} { return m.done }

// Stop ends the shaper (end of file on its standard input and SIGTERM;
// SIGKILL if it has not exited within 5 s), waits for it, keeps the final
// counters for Snapshot and releases the shared page. It returns an error
// if the shaper had failed or exited other than by being stopped.
func (m *Monitor) Stop() error {
	if err := m.startWaiter(); err != nil {
		m.release()
		return err
	}
	m.mu.Lock()
	already := m.stopped
	m.stopped = true
	m.mu.Unlock()
	var exitedEarly bool
	select {
	case <-m.done:
		exitedEarly = !already
	default:
	}
	m.stdinW.Close()
	if !exitedEarly {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.done:
		case <-time.After(5 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
	}
	m.mu.Lock()
	failed := m.lay != nil && m.lay.state.Load() == stateFailed
	msg := ""
	if failed {
		msg = m.lay.errorText()
	}
	m.mu.Unlock()
	m.release()
	switch {
	case already:
		return nil
	case failed:
		return fmt.Errorf("emulator: the shaper had failed: %s", msg)
	case exitedEarly:
		return fmt.Errorf("emulator: the shaper had already exited (%v); its stderr: %q", m.waitErr, m.stderr.String())
	case m.waitErr != nil:
		return fmt.Errorf("emulator: the shaper did not exit cleanly: %v; its stderr: %q", m.waitErr, m.stderr.String())
	}
	return nil
}

func (m *Monitor) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lay == nil {
		return
	}
	m.final = [2]linkspec.Counters{m.lay.dirs[0].load(), m.lay.dirs[1].load()}
	m.finalGC = loadGC(m.lay)
	m.lay = nil
	unix.Munmap(m.mem)
	m.mem = nil
	m.memf.Close()
	m.cfgf.Close()
	m.stdinR.Close()
	m.stdinW.Close()
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - 4096; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// configFromFD is envConfig's value for a configuration passed as JSON in
// file descriptor 4.
const configFromFD = "fd:4"

// configFile puts the encoded configuration in a sealed-size memfd,
// positioned at its start for the child to read.
func configFile(b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("quicbench-emulator-config", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("emulator: memfd_create for the configuration: %w", err)
	}
	f := os.NewFile(uintptr(fd), "quicbench-emulator-config")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("emulator: writing the configuration: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("emulator: rewinding the configuration: %w", err)
	}
	return f, nil
}
