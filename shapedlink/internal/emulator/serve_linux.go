package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaybeServe turns this process into the shaper if it was started by a
// command from Command (EnvConfig is set) and never returns in that case:
// it exits 0 when stopped (SIGTERM, SIGINT, end of file on standard input)
// and non-zero on failure, after writing the reason to the shared page and
// to standard error. In any other process it returns at once and does
// nothing. Call it from an init function (shapedlink does) or first thing
// in main or TestMain.
func MaybeServe() {
	v, ok := os.LookupEnv(EnvConfig)
	if !ok {
		return
	}
	os.Exit(serve(v))
}

// Both sockets carry a virtio_net_hdr in front of each frame
// (PACKET_VNET_HDR). A sender on a veth leaves its checksum to "hardware"
// (CHECKSUM_PARTIAL); the header carries where the checksum goes, and
// writing it back with the frame keeps the frame valid for the receiver.
// Without it every TCP and UDP frame would arrive with a bad checksum.
const vnetHdrLen = 10

const (
	ctlLen   = 64 // room for one SCM_TIMESTAMPNS message
	rxBatch  = 64
	txBatch  = 64
	bigSlot  = 64<<10 + 1024 // any frame a 64 KiB GSO skb could make
	jumbo    = 9216 + 64
	maxArena = 1 << 30
)

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
	fail := func(err error) int {
		lay.setError(err.Error())
		fmt.Fprintln(os.Stderr, "quicbench-shaper:", err)
		return 1
	}
	os.Unsetenv(EnvConfig) // nothing this process starts should become a shaper
	var cc childConfig
	if err := json.Unmarshal([]byte(v), &cc); err != nil {
		return fail(fmt.Errorf("decoding %s: %w", EnvConfig, err))
	}
	cfg := cc.Config
	if err := cfg.Validate(); err != nil {
		return fail(err)
	}
	// Pdeathsig was set by the parent's fork; if the parent died before
	// that took effect we have been re-parented and must not linger.
	if cc.ParentPID != 0 && os.Getppid() != cc.ParentPID {
		return fail(fmt.Errorf("the parent process %d is gone", cc.ParentPID))
	}
	lay.pid.Store(uint64(os.Getpid()))
	// Each forwarding thread holds a P while it spins; leave room for the
	// runtime's own goroutines so a spinning loop never waits for a P.
	runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))

	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fail(fmt.Errorf("eventfd: %w", err))
	}
	defer unix.Close(wake)
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	open := func(name string) (rx, tx int, err error) {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return -1, -1, fmt.Errorf("interface %q in the shaper's network namespace: %w (was the shaper started inside that namespace?)", name, err)
		}
		if rx, err = openRx(ifi.Index); err != nil {
			return -1, -1, fmt.Errorf("receive socket on %s: %w", name, err)
		}
		fds = append(fds, rx)
		if tx, err = openTx(ifi.Index); err != nil {
			return -1, -1, fmt.Errorf("send socket on %s: %w", name, err)
		}
		fds = append(fds, tx)
		return rx, tx, nil
	}
	// Ready must mean "frames get through": wait for both interfaces to
	// be up with carrier (IFF_RUNNING, which the kernel sets only after it
	// has activated the device's qdisc; before that, frames are dropped).
	for _, name := range []string{cfg.IfA, cfg.IfB} {
		if err := waitRunning(name, 5*time.Second); err != nil {
			return fail(err)
		}
	}
	rxA, txA, err := open(cfg.IfA)
	if err != nil {
		return fail(err)
	}
	rxB, txB, err := open(cfg.IfB)
	if err != nil {
		return fail(err)
	}
	// Record the buffers as the kernel applied them: without privilege in
	// the initial namespace the forced sizes fall back to the host limits.
	for i, p := range [][2]int{{rxA, txB}, {rxB, txA}} {
		rcv, err := unix.GetsockoptInt(p[0], unix.SOL_SOCKET, unix.SO_RCVBUF)
		if err != nil {
			return fail(fmt.Errorf("reading back SO_RCVBUF: %w", err))
		}
		snd, err := unix.GetsockoptInt(p[1], unix.SOL_SOCKET, unix.SO_SNDBUF)
		if err != nil {
			return fail(fmt.Errorf("reading back SO_SNDBUF: %w", err))
		}
		lay.dirs[i].rcvBuf.Store(uint64(rcv))
		lay.dirs[i].sndBuf.Store(uint64(snd))
	}
	spin := cfg.SpinThreshold
	if spin == 0 {
		spin = DefaultSpinThreshold
	}
	var stop atomic.Bool
	base := time.Now()
	loops := make([]*dirLoop, 2)
	for i, p := range []struct {
		d      Direction
		rx, tx int
	}{{cfg.AToB, rxA, txB}, {cfg.BToA, rxB, txA}} {
		l, err := newDirLoop(p.d, p.rx, p.tx, wake, &lay.dirs[i], &stop, int64(spin), base)
		if err != nil {
			return fail(err)
		}
		defer l.close()
		loops[i] = l
	}

	// Priority for every thread of the process, not just the forwarding
	// ones: when the runtime preempts a locked goroutine, another runtime
	// thread has to hand it back its P, and on a busy machine a
	// normal-priority helper thread waits milliseconds for a CPU. Threads
	// created later inherit the policy and nice value of their creator.
	applyPriority(cfg, lay)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(2)
	for _, l := range loops {
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
	applyPriority(cfg, lay) // and any thread started meanwhile
	lay.state.Store(stateReady)

	var runErr error
	select {
	case <-sigs:
	case <-eof:
	case runErr = <-errc:
	}
	stop.Store(true)
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(wake, one[:])
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Second):
	}
	if runErr != nil {
		return fail(runErr)
	}
	lay.state.Store(stateStopped)
	return 0
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

func waitRunning(name string, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return fmt.Errorf("interface %q in the shaper's network namespace: %w (was the shaper started inside that namespace?)", name, err)
		}
		if ifi.Flags&net.FlagRunning != 0 {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("interface %q is not up with carrier after %v (flags %v); set it and its veth peer up", name, d, ifi.Flags)
		}
		time.Sleep(time.Millisecond)
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openRx(ifindex int) (int, error) {
	// Protocol 0 at creation: the socket receives nothing until bind
	// names both the protocol and the interface, so no frame from another
	// interface slips in between.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket(AF_PACKET): %w (the shaper needs CAP_NET_RAW in its network namespace)", err)
	}
	// Our own writes on this interface (the other direction's output)
	// must not come back to us. Older kernels lack the option; the
	// PACKET_OUTGOING check in recv covers them.
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("PACKET_VNET_HDR: %w", err)
	}
	// Kernel receive timestamps: a frame's arrival is when it reached the
	// shaper's interface, not when the forwarding thread got round to
	// reading it.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

func openTx(ifindex int) (int, error) {
	// Bound with protocol 0 the socket never receives; the kernel takes
	// the frame's protocol from its Ethernet header.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket(AF_PACKET): %w (the shaper needs CAP_NET_RAW in its network namespace)", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("PACKET_VNET_HDR: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 8<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

type entry struct {
	buf  int32
	size int32
	due  int64
}

// dirLoop is one direction of the shaper: it reads from rx, holds frames
// per its Model, and writes them to tx when due. Everything it touches per
// frame is preallocated.
type dirLoop struct {
	model       *Model
	rx, tx      int
	wake        int
	sh          *shmDir
	stop        *atomic.Bool
	spin        int64
	base        time.Time
	slot        int
	arena       []byte // (limit+rxBatch) frame buffers, anonymous mmap
	free        []int32
	ring        []entry
	head, n     int
	rxHdr       []unix.Mmsghdr
	rxIov       []unix.Iovec
	rxName      []unix.RawSockaddrLinklayer
	rxBuf       []int32
	rxCtl       []byte
	txHdr       []unix.Mmsghdr
	txIov       []unix.Iovec
	pfd         []unix.PollFd
	lastSocket  int64
	lastArrival int64
	lastDrain   int64 // when a read last emptied the socket
	delay       int64
	// Spin budget: at most spinBudget of every spinWindow is spent
	// spinning, so a high packet rate degrades to timer wake-ups instead
	// of a thread that never sleeps.
	windowStart, windowSpin, lastSpin int64

	// Local copies of the counters, published to sh after each batch.
	received, forwarded, fwdBytes  uint64
	loss, limit, oversize, sendErr uint64
	sockDrops, late, maxLate       uint64
	stamped                        uint64
	hist                           [LateBuckets]uint64
}

func newDirLoop(d Direction, rx, tx, wake int, sh *shmDir, stop *atomic.Bool, spin int64, base time.Time) (*dirLoop, error) {
	nbuf := d.Limit + rxBatch
	slot := bigSlot
	if nbuf*slot > maxArena {
		slot = jumbo
	}
	arena, err := unix.Mmap(-1, 0, nbuf*slot, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("allocating %d frame buffers of %d bytes: %w", nbuf, slot, err)
	}
	l := &dirLoop{
		model: NewModel(d), delay: int64(d.Delay), rx: rx, tx: tx, wake: wake, sh: sh, stop: stop, spin: spin, base: base,
		slot: slot, arena: arena,
		free:   make([]int32, nbuf),
		ring:   make([]entry, d.Limit),
		rxHdr:  make([]unix.Mmsghdr, rxBatch),
		rxIov:  make([]unix.Iovec, rxBatch),
		rxName: make([]unix.RawSockaddrLinklayer, rxBatch),
		rxBuf:  make([]int32, rxBatch),
		rxCtl:  make([]byte, rxBatch*ctlLen),
		txHdr:  make([]unix.Mmsghdr, txBatch),
		txIov:  make([]unix.Iovec, txBatch),
		pfd:    []unix.PollFd{{Fd: int32(rx), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}},
	}
	for i := range l.free {
		l.free[i] = int32(nbuf - 1 - i)
	}
	for i := range l.rxHdr {
		l.rxHdr[i].Hdr.Name = (*byte)(unsafe.Pointer(&l.rxName[i]))
		l.rxHdr[i].Hdr.Iov = &l.rxIov[i]
		l.rxHdr[i].Hdr.SetIovlen(1)
	}
	for i := range l.txHdr {
		l.txHdr[i].Hdr.Iov = &l.txIov[i]
		l.txHdr[i].Hdr.SetIovlen(1)
	}
	return l, nil
}

func (l *dirLoop) close() { _ = unix.Munmap(l.arena) }

func (l *dirLoop) now() int64 { return int64(time.Since(l.base)) }

func (l *dirLoop) run() error {
	for !l.stop.Load() {
		now := l.now()
		if err := l.sendDue(now, now); err != nil {
			return err
		}
		n, err := l.recv()
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		now = l.now()
		if now-l.lastSocket > int64(100*time.Millisecond) {
			l.lastSocket = now
			l.readSocketDrops()
		}
		if l.n == 0 {
			// Idle: wake on the next arrival (its kernel timestamp makes
			// the wake-up latency harmless).
			if err := l.poll(int64(200*time.Millisecond), true); err != nil {
				return err
			}
			continue
		}
		// Frames are held. A frame that arrives now cannot be due before
		// now + delay, so the socket need not be watched: reading it in a
		// batch later, at the next due time or at most maxDefer after the
		// last time the socket was drained, changes nothing in the model
		// (arrivals carry their kernel timestamps and are replayed in
		// order). That turns one wake-up per arriving frame into one per
		// batch on a busy link.
		due := l.ring[l.head].due
		target := due
		watch := l.delay < minDefer
		if !watch {
			target = min(due, l.lastDrain+min(l.delay, maxDefer))
		}
		wait := target - now
		if wait <= 0 {
			continue
		}
		if l.n > spinMaxHeld {
			// Busy: no spinning, and no wake-up for less than a quantum;
			// frames may leave up to a quantum late (see DirStats.Late).
			wait = max(wait, busyQuantum)
		} else if l.spin > 0 && target == due && l.spinAllowed(now) {
			// (Spin only towards a frame's due time, never towards a
			// read deadline, which has no precision to buy.)
			if wait <= l.spin {
				// Spin: go round again, polling the socket without
				// sleeping, until the head frame is due.
				if l.lastSpin != 0 {
					l.windowSpin += now - l.lastSpin
				}
				l.lastSpin = now
				continue
			}
			wait -= l.spin
		}
		l.lastSpin = 0
		if err := l.poll(wait, watch); err != nil {
			return err
		}
	}
	return nil
}

const (
	// Spinning buys precision for sparse traffic (an idle round trip);
	// with more than a few frames held the link is busy, a frame's
	// timing error of a timer wake-up is immaterial next to the queue,
	// and the CPU is better left to the endpoints.
	spinMaxHeld = 4
	busyQuantum = int64(50 * time.Microsecond)
	minDefer    = int64(100 * time.Microsecond)
	maxDefer    = int64(500 * time.Microsecond) // bounds the socket's backlog
	spinWindow  = int64(10 * time.Millisecond)
	spinBudget  = spinWindow / 4
)

func (l *dirLoop) spinAllowed(now int64) bool {
	if now-l.windowStart >= spinWindow {
		l.windowStart, l.windowSpin = now, 0
	}
	return l.windowSpin < spinBudget
}

// poll sleeps for ns or until the loop is told to stop, and, if watchRx,
// until a frame arrives.
func (l *dirLoop) poll(ns int64, watchRx bool) error {
	ts := unix.NsecToTimespec(ns)
	l.pfd[0].Revents, l.pfd[1].Revents = 0, 0
	fds := l.pfd[1:]
	if watchRx {
		fds = l.pfd
	}
	// A raw system call: the goroutine keeps its P while it sleeps. With
	// unix.Ppoll the runtime's sysmon would take the P away after 20 us
	// and the thread would have to win one back on every wake-up; on a
	// busy link that churn (sysmon waking every 20 us, futex hand-offs)
	// cost more CPU than the forwarding itself. A signal (the runtime's
	// preemption or GC) interrupts the sleep with EINTR, so the runtime
	// can still stop the goroutine when it needs to.
	_, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 && errno != unix.EINTR {
		return fmt.Errorf("ppoll: %w", errno)
	}
	return nil
}

func (l *dirLoop) readSocketDrops() {
	st, err := unix.GetsockoptTpacketStats(l.rx, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err == nil && st.Drops > 0 { // reading resets the kernel's counters
		l.sockDrops += uint64(st.Drops)
		l.sh.socketDrops.Store(l.sockDrops)
	}
}

// recv reads one batch of frames and passes each through the model,
// arriving at its kernel receive timestamp. It returns how many frames it
// read.
func (l *dirLoop) recv() (int, error) {
	top := len(l.free)
	for i := 0; i < rxBatch; i++ {
		b := l.free[top-1-i]
		l.rxBuf[i] = b
		l.rxIov[i].Base = &l.arena[int(b)*l.slot]
		l.rxIov[i].SetLen(l.slot)
		l.rxHdr[i].Hdr.Namelen = unix.SizeofSockaddrLinklayer
		l.rxHdr[i].Hdr.Control = &l.rxCtl[i*ctlLen]
		l.rxHdr[i].Hdr.SetControllen(ctlLen)
		l.rxHdr[i].Hdr.Flags = 0
	}
	r, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(l.rx), uintptr(unsafe.Pointer(&l.rxHdr[0])), rxBatch, unix.MSG_DONTWAIT|unix.MSG_TRUNC, 0, 0)
	if errno != 0 {
		if errno == unix.EAGAIN {
			l.lastDrain = l.now()
			return 0, nil
		}
		if errno == unix.EINTR {
			return 0, nil
		}
		return 0, fmt.Errorf("recvmmsg: %w", errno)
	}
	n := int(r)
	wall := time.Now()
	now := int64(wall.Sub(l.base))
	real := wall.UnixNano()
	if n < rxBatch {
		l.lastDrain = now
	}
	l.free = l.free[:top-rxBatch]
	for i := 0; i < rxBatch; i++ {
		b := l.rxBuf[rxBatch-1-i] // give back in the original stack order
		if i < rxBatch-n {
			l.free = append(l.free, b)
		}
	}
	for i := 0; i < n; i++ {
		b := l.rxBuf[i]
		if l.rxName[i].Pkttype == unix.PACKET_OUTGOING {
			l.free = append(l.free, b)
			continue
		}
		l.received++
		size := int(l.rxHdr[i].Len) - vnetHdrLen
		if l.rxHdr[i].Hdr.Flags&unix.MSG_TRUNC != 0 || size+vnetHdrLen > l.slot || size <= 0 {
			l.oversize++
			l.free = append(l.free, b)
			continue
		}
		at := l.arrival(i, now, real)
		// Frames due by this arrival leave before it is judged, so the
		// limit sees what it would have seen at that instant.
		if err := l.sendDue(at, now); err != nil {
			return n, err
		}
		due, v := l.model.Arrive(at, size)
		switch v {
		case Lost:
			l.loss++
			l.free = append(l.free, b)
		case OverLimit:
			l.limit++
			l.free = append(l.free, b)
		default:
			idx := l.head + l.n
			if idx >= len(l.ring) {
				idx -= len(l.ring)
			}
			l.ring[idx] = entry{buf: b, size: int32(size), due: due}
			l.n++
		}
	}
	l.publishRx()
	return n, nil
}

// arrival converts frame i's kernel timestamp (CLOCK_REALTIME) to the
// loop's monotonic scale using one simultaneous reading of both clocks. A
// missing timestamp, or one that a wall-clock step has made implausible,
// gives the read time instead; the result is never later than now and
// never earlier than the previous arrival, so the model's clock only moves
// forward.
func (l *dirLoop) arrival(i int, now, real int64) int64 {
	a := now
	h := &l.rxHdr[i].Hdr
	if h.Controllen >= unix.SizeofCmsghdr+uint64(unsafe.Sizeof(unix.Timespec{})) {
		c := (*unix.Cmsghdr)(unsafe.Pointer(&l.rxCtl[i*ctlLen]))
		if c.Level == unix.SOL_SOCKET && c.Type == unix.SCM_TIMESTAMPNS {
			ts := (*unix.Timespec)(unsafe.Pointer(&l.rxCtl[i*ctlLen+unix.SizeofCmsghdr]))
			if age := real - ts.Nano(); age >= 0 && age < int64(time.Second) {
				a = now - age
				l.stamped++
			}
		}
	}
	if a < l.lastArrival {
		a = l.lastArrival
	}
	l.lastArrival = a
	return a
}

func (l *dirLoop) publishRx() {
	p, b := l.model.Held()
	l.sh.packets.Store(uint64(p))
	l.sh.bytes.Store(uint64(b))
	l.sh.received.Store(l.received)
	l.sh.lossDrops.Store(l.loss)
	l.sh.limitDrops.Store(l.limit)
	l.sh.oversizeDrops.Store(l.oversize)
	l.sh.stamped.Store(l.stamped)
}

// sendDue writes every held frame whose due time is not after cutoff;
// now is the time, for the lateness figures.
func (l *dirLoop) sendDue(cutoff, now int64) error {
	for l.n > 0 && l.ring[l.head].due <= cutoff {
		k := 0
		for k < txBatch && k < l.n {
			idx := l.head + k
			if idx >= len(l.ring) {
				idx -= len(l.ring)
			}
			e := &l.ring[idx]
			if e.due > cutoff {
				break
			}
			l.txIov[k].Base = &l.arena[int(e.buf)*l.slot]
			l.txIov[k].SetLen(int(e.size) + vnetHdrLen)
			k++
		}
		sent := 0
		for sent < k {
			r, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(l.tx), uintptr(unsafe.Pointer(&l.txHdr[sent])), uintptr(k-sent), unix.MSG_DONTWAIT, 0, 0)
			if errno != 0 {
				if errno == unix.EAGAIN || errno == unix.EINTR {
					break // the frames stay held; try again on the next turn
				}
				// This frame is lost (e.g. ENOBUFS: the peer's backlog
				// is full); count it and go on with the next.
				l.sendErr++
				l.retire(now, false)
				sent++
				continue
			}
			for j := 0; j < int(r); j++ {
				l.retire(now, true)
			}
			sent += int(r)
		}
		l.publishTx()
		if sent < k {
			return nil
		}
	}
	return nil
}

// retire removes the head frame after it was written (or failed).
func (l *dirLoop) retire(now int64, ok bool) {
	e := l.ring[l.head]
	l.head++
	if l.head == len(l.ring) {
		l.head = 0
	}
	l.n--
	l.model.Depart(int(e.size))
	l.free = append(l.free, e.buf)
	if ok {
		l.forwarded++
		l.fwdBytes += uint64(e.size)
		late := uint64(now - e.due)
		l.late += late
		if late > l.maxLate {
			l.maxLate = late
		}
		b := min(bits.Len64(late/1000), LateBuckets-1)
		l.hist[b]++
		l.sh.late[b].Store(l.hist[b])
	}
}

func (l *dirLoop) publishTx() {
	p, b := l.model.Held()
	l.sh.packets.Store(uint64(p))
	l.sh.bytes.Store(uint64(b))
	l.sh.forwarded.Store(l.forwarded)
	l.sh.fwdBytes.Store(l.fwdBytes)
	l.sh.sendErrors.Store(l.sendErr)
	l.sh.lateNanos.Store(l.late)
	l.sh.maxLate.Store(l.maxLate)
}
