package bench

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// DaemonConfig is the server end of two-host mode.
type DaemonConfig struct {
	// Addr is the control address to listen on, such as 0.0.0.0:7390.
	// The path probe answers on UDP at the same port number, and each
	// run's server listens on ServerPort (TCP and UDP).
	Addr string
	// Secret is the shared secret a driver must prove it holds, at least
	// MinSecretLen bytes.
	Secret []byte
	// IdleTimeout ends the daemon after this long with no session; zero
	// never does.
	IdleTimeout time.Duration
	// Namespace, when set, is where the daemon's sockets and server
	// processes live (tests, embedding); nil is this process's own
	// network namespace.
	Namespace *shapedlink.Namespace
	// Logger receives what the daemon does, refusals included.
	Logger *slog.Logger
	// HandshakeTimeout bounds a driver's handshake; zero is 10 s.
	HandshakeTimeout time.Duration
}

// Daemon serves two-host runs, one session at a time.
type Daemon struct {
	cfg  DaemonConfig
	log  *slog.Logger
	ln   net.Listener
	port int
	dir  string

	ended chan struct{} // a session ended: restart the idle countdown

	mu         sync.Mutex
	active     string // the peer of the authenticated session, if any
	handshakes int
	runs       int
}

// maxHandshakes bounds the connections authenticating at once; more are
// refused until one finishes (each takes remoteHandshakeTimeout at most).
const maxHandshakes = 8

// ListenDaemon checks cfg and listens on its address; Serve then answers
// drivers.
func ListenDaemon(ctx context.Context, cfg DaemonConfig) (*Daemon, error) {
	if len(cfg.Secret) < MinSecretLen {
		return nil, fmt.Errorf("the daemon's secret is %d bytes; give at least %d", len(cfg.Secret), MinSecretLen)
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = remoteHandshakeTimeout
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("-idle-timeout %v is negative: give a duration such as 30m", cfg.IdleTimeout)
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("-serve %q is not HOST:PORT (e.g. 0.0.0.0:%d): %v", cfg.Addr, DefaultRemotePort, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	var ln net.Listener
	var err error
	if cfg.Namespace != nil {
		ln, err = cfg.Namespace.Listen(ctx, "tcp", cfg.Addr)
	} else {
		ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listening for drivers on %s: %w", cfg.Addr, err)
	}
	dir, err := os.MkdirTemp("", "quicbench-serve-")
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &Daemon{cfg: cfg, log: log, ln: ln, port: ln.Addr().(*net.TCPAddr).Port, dir: dir,
		ended: make(chan struct{}, 1)}, nil
}

// Addr is the control address the daemon listens on.
func (d *Daemon) Addr() net.Addr { return d.ln.Addr() }

// Serve answers drivers until ctx ends or no session has been open for the
// idle timeout; then it ends every session (stopping its server), removes
// its run directories and returns nil. It returns an error only if
// accepting connections fails.
func (d *Daemon) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		d.ln.Close()
		wg.Wait()
		os.RemoveAll(d.dir)
	}()
	conns, acceptErr := make(chan net.Conn), make(chan error, 1)
	go func() {
		for {
			c, err := d.ln.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			select {
			case conns <- c:
			case <-ctx.Done():
				c.Close()
				return
			}
		}
	}()
	var idle <-chan time.Time
	var timer *time.Timer
	if d.cfg.IdleTimeout > 0 {
		timer = time.NewTimer(d.cfg.IdleTimeout)
		defer timer.Stop()
		idle = timer.C
	}
	d.log.Info("two-host daemon listening", "addr", d.ln.Addr().String(), "probe", "udp port "+strconv.Itoa(d.port),
		"data", "tcp and udp port "+strconv.Itoa(ServerPort), "idle_timeout", d.cfg.IdleTimeout)
	for {
		select {
		case <-ctx.Done():
			d.log.Info("stopping")
			return nil
		case <-idle:
			d.mu.Lock()
			busy := d.active != ""
			d.mu.Unlock()
			if !busy {
				d.log.Info("no session for the idle timeout; exiting", "idle_timeout", d.cfg.IdleTimeout)
				return nil
			}
			timer.Reset(d.cfg.IdleTimeout)
		case <-d.ended:
			if timer != nil {
				timer.Reset(d.cfg.IdleTimeout)
			}
		case c := <-conns:
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.handle(ctx, c)
			}()
		case err := <-acceptErr:
			return fmt.Errorf("accepting drivers on %s: %w", d.ln.Addr(), err)
		}
	}
}

// refuse sends one refusal line and logs it.
func (d *Daemon) refuse(cc *ctlConn, peer, why string) {
	_ = cc.send(ctlMsg{Op: "refused", Why: why}, d.cfg.HandshakeTimeout)
	d.log.Warn("refused a driver", "peer", peer, "why", why)
}

// handle is one connection: refused at once when a session is active,
// else authenticated, then served as the session.
func (d *Daemon) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	peer := c.RemoteAddr().String()
	cc := newCtlConn(c)
	d.mu.Lock()
	switch {
	case d.active != "":
		who := d.active
		d.mu.Unlock()
		d.refuse(cc, peer, "one run at a time: a run from "+who+" is in progress")
		return
	case d.handshakes >= maxHandshakes:
		d.mu.Unlock()
		d.refuse(cc, peer, fmt.Sprintf("%d connections are already authenticating; try again in %v", maxHandshakes, d.cfg.HandshakeTimeout))
		return
	}
	d.handshakes++
	d.mu.Unlock()
	welcome, err := d.authenticate(cc)
	d.mu.Lock()
	d.handshakes--
	if err != nil {
		d.mu.Unlock()
		d.refuse(cc, peer, err.Error())
		return
	}
	if d.active != "" {
		// Another driver finished its handshake first.
		who := d.active
		d.mu.Unlock()
		d.refuse(cc, peer, "one run at a time: a run from "+who+" is in progress")
		return
	}
	// The session is this driver's before it hears so.
	d.active = peer
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.active = ""
		d.mu.Unlock()
		select {
		case d.ended <- struct{}{}:
		default:
		}
	}()
	if err := cc.send(welcome, d.cfg.HandshakeTimeout); err != nil {
		d.log.Warn("sending the daemon's proof", "peer", peer, "err", err)
		return
	}
	d.log.Info("session started", "peer", peer)
	cc.limit = remoteMaxLine
	err = d.session(ctx, cc)
	d.log.Info("session ended", "peer", peer, "err", err)
}

// authenticate is the daemon's half of the handshake: its challenge sent
// and the driver's proof checked. It returns the daemon's own proof, to
// send once the session is claimed, or the reason to refuse, as the
// driver will read it.
func (d *Daemon) authenticate(cc *ctlConn) (ctlMsg, error) {
	dnonce, err := newNonce()
	if err != nil {
		return ctlMsg{}, err
	}
	if err := cc.send(ctlMsg{Op: "hello", Version: RemoteProtocol, Nonce: dnonce}, d.cfg.HandshakeTimeout); err != nil {
		return ctlMsg{}, fmt.Errorf("sending the challenge: %v", err)
	}
	m, err := cc.recv(d.cfg.HandshakeTimeout)
	switch {
	case err != nil:
		return ctlMsg{}, fmt.Errorf("no proof of the secret: %v", err)
	case m.Op != "auth":
		return ctlMsg{}, fmt.Errorf("no proof of the secret: expected \"auth\", got %q", m.Op)
	case m.Version != RemoteProtocol:
		return ctlMsg{}, fmt.Errorf("the driver speaks protocol version %d and this daemon %d: run the same quicbench version on both hosts", m.Version, RemoteProtocol)
	case len(m.Nonce) != remoteNonceLen:
		return ctlMsg{}, fmt.Errorf("the driver's challenge is %d bytes, not %d", len(m.Nonce), remoteNonceLen)
	case !hmac.Equal(m.Proof, remoteProof(d.cfg.Secret, "client", dnonce, m.Nonce)):
		return ctlMsg{}, errors.New("wrong proof of the secret: do both hosts' -secret-file hold the same secret?")
	}
	return ctlMsg{Op: "welcome", Version: RemoteProtocol, Proof: remoteProof(d.cfg.Secret, "server", m.Nonce, dnonce)}, nil
}

// daemonRun is the server process of the run in progress.
type daemonRun struct {
	name    string
	dir     string
	out     string
	started time.Time
	within  time.Duration // the server's deadline is started+within
	cmd     *exec.Cmd
	done    chan struct{}
	err     error // the exit status, once done is closed
}

// stop ends the run's server if it still runs and removes its directory.
func (r *daemonRun) stop() {
	if r.cmd != nil {
		StopRole(r.cmd, r.done)
	}
	os.RemoveAll(r.dir)
}

// session answers one authenticated driver's ops until it says bye, goes
// quiet or breaks the protocol. A server still running when it ends is
// stopped.
func (d *Daemon) session(ctx context.Context, cc *ctlConn) error {
	var run *daemonRun
	defer func() {
		if run != nil {
			run.stop()
		}
	}()
	for {
		wait := remoteOpTimeout
		if run != nil {
			// The driver's client runs until the server's deadline at most.
			wait = time.Until(run.deadline()) + time.Minute
		}
		m, err := cc.recv(wait)
		if err != nil {
			return err
		}
		switch m.Op {
		case "bye":
			return nil
		case "probe":
			if err := d.probe(ctx, cc); err != nil {
				return err
			}
		case "start":
			if run != nil {
				d.log.Warn("a new run started before the last one finished; stopping its server", "run", run.name)
				run.stop()
				run = nil
			}
			var why string
			run, why = d.start(ctx, cc, m)
			if why != "" {
				d.log.Warn("run not started", "run", m.Run, "why", why)
				if err := cc.send(ctlMsg{Op: "error", Why: why}, remoteOpTimeout); err != nil {
					return err
				}
			}
		case "finish":
			if run == nil {
				if err := cc.send(ctlMsg{Op: "error", Why: "finish without a running server"}, remoteOpTimeout); err != nil {
					return err
				}
				continue
			}
			err := d.finish(cc, run)
			run = nil
			if err != nil {
				return err
			}
		default:
			_ = cc.send(ctlMsg{Op: "error", Why: fmt.Sprintf("unknown op %q", m.Op)}, remoteOpTimeout)
			return fmt.Errorf("unknown op %q", m.Op)
		}
	}
}

// deadline is when the run's server must be done.
func (r *daemonRun) deadline() time.Time { return r.started.Add(r.within) }

// probe answers the driver's UDP echoes on the control port's number,
// from the session's peer only, until the driver says it is done or
// probeWindow passes.
func (d *Daemon) probe(ctx context.Context, cc *ctlConn) error {
	local := cc.c.LocalAddr().(*net.TCPAddr)
	peer := cc.c.RemoteAddr().(*net.TCPAddr)
	addr := net.JoinHostPort(local.IP.String(), strconv.Itoa(d.port))
	var pc net.PacketConn
	var err error
	if d.cfg.Namespace != nil {
		pc, err = d.cfg.Namespace.ListenPacket(ctx, "udp", addr)
	} else {
		pc, err = (&net.ListenConfig{}).ListenPacket(ctx, "udp", addr)
	}
	if err != nil {
		return cc.send(ctlMsg{Op: "error", Why: fmt.Sprintf("the probe cannot listen on udp %s: %v", addr, err)}, remoteOpTimeout)
	}
	defer pc.Close()
	if err := cc.send(ctlMsg{Op: "probing", Port: d.port}, remoteOpTimeout); err != nil {
		return err
	}
	echoed := make(chan int, 1)
	go func() {
		n := 0
		defer func() { echoed <- n }()
		_ = pc.SetReadDeadline(time.Now().Add(probeWindow))
		buf := make([]byte, 2*probeSize)
		for {
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			u, ok := from.(*net.UDPAddr)
			if !ok || !u.IP.Equal(peer.IP) || k != probeSize || string(buf[:len(probeMagic)]) != string(probeMagic) {
				continue
			}
			if _, err := pc.WriteTo(buf[:k], from); err == nil {
				n++
			}
		}
	}()
	m, err := cc.recv(probeWindow + d.cfg.HandshakeTimeout)
	pc.Close()
	n := <-echoed
	if err != nil {
		return err
	}
	if m.Op != "probe-done" {
		return fmt.Errorf("expected \"probe-done\", got %q", m.Op)
	}
	return cc.send(ctlMsg{Op: "probed", Echoed: n}, remoteOpTimeout)
}

// start checks the driver's spec, completes it (address, certificate,
// deadline, result path), starts the server where the daemon runs, and
// answers ready once it listens. A reason not to run comes back as why.
func (d *Daemon) start(ctx context.Context, cc *ctlConn, m ctlMsg) (*daemonRun, string) {
	if m.Spec == nil {
		return nil, "start without a spec"
	}
	spec := *m.Spec
	if _, err := transport.ParseArm(string(spec.Arm)); err != nil {
		return nil, err.Error()
	}
	if err := spec.Workload.Validate(); err != nil {
		return nil, err.Error()
	}
	if spec.Sessions < 0 || spec.Sessions > MaxSessions {
		return nil, fmt.Sprintf("sessions %d is outside 0..%d", spec.Sessions, MaxSessions)
	}
	if m.Within <= 0 || m.Within > MaxDuration+10*time.Minute {
		return nil, fmt.Sprintf("a run of %v is outside (0, %v]", m.Within, MaxDuration+10*time.Minute)
	}
	if name := spec.Transport.CongestionControl; spec.Arm == transport.ArmTCP && name != "" {
		if err := transport.CheckCongestionControl(name); err != nil {
			return nil, "on the server's host: " + err.Error()
		}
	}
	host := cc.c.LocalAddr().(*net.TCPAddr).IP.String()
	cert, err := transport.NewCertificate(host)
	if err != nil {
		return nil, err.Error()
	}
	d.mu.Lock()
	d.runs++
	n := d.runs
	d.mu.Unlock()
	run := &daemonRun{name: m.Run, dir: filepath.Join(d.dir, fmt.Sprintf("run-%d", n)), started: time.Now(), within: m.Within}
	if err := os.MkdirAll(run.dir, 0o700); err != nil {
		return nil, err.Error()
	}
	run.out = filepath.Join(run.dir, RoleServer+".json")
	// Only what the daemon decides: where to listen, its own key, where
	// the result goes, no files of the driver's choosing.
	spec.RoleBase = RoleBase{Role: RoleServer, Addr: net.JoinHostPort(host, strconv.Itoa(ServerPort)),
		Transport: spec.Transport, Out: run.out, Deadline: run.started.Add(m.Within)}
	spec.Transport.Certificate = cert
	spec.Transport.QlogDir = ""
	cmd, ready, err := benchRoles.StartServer(ctx, d.cfg.Namespace, RoleServer, spec, run.dir)
	if err != nil {
		os.RemoveAll(run.dir)
		return nil, err.Error()
	}
	run.cmd, run.done = cmd, make(chan struct{})
	go func() { run.err = cmd.Wait(); close(run.done) }()
	if err := WaitReady(ctx, ready, run.done, 15*time.Second); err != nil {
		StopRole(run.cmd, run.done)
		tail := logTail(filepath.Join(run.dir, RoleServer+".log"), 2048)
		run.stop()
		return nil, fmt.Sprintf("the server did not start listening: %v; the end of its log: %s", err, clip(tail, 2048))
	}
	d.log.Info("server listening", "run", m.Run, "arm", spec.Arm, "addr", spec.Addr)
	clientCert := cert.ClientOnly()
	if err := cc.send(ctlMsg{Op: "ready", Addr: spec.Addr, Port: ServerPort, Certificate: &clientCert}, remoteOpTimeout); err != nil {
		run.stop()
		return nil, err.Error()
	}
	return run, ""
}

// finish waits (20 s at most, as a run over a link does) for the server
// to end now that the client has, then sends its result and the end of its
// log.
func (d *Daemon) finish(cc *ctlConn, run *daemonRun) error {
	defer run.stop()
	select {
	case <-run.done:
	case <-time.After(20 * time.Second):
		d.log.Warn("server still running 20s after the client ended; stopping it", "run", run.name)
		StopRole(run.cmd, run.done)
	}
	msg := ctlMsg{Op: "result", Log: logTail(filepath.Join(run.dir, RoleServer+".log"), remoteLogTail)}
	if run.err != nil {
		msg.Exit = run.err.Error()
	}
	if res, err := ReadResult[RoleResult](run.out); err == nil {
		msg.Result = &res
	} else {
		msg.Why = "the server wrote no result: " + err.Error()
	}
	d.log.Info("run finished", "run", run.name, "exit", msg.Exit)
	return cc.send(msg, remoteOpTimeout)
}

// logTail is the last max bytes of the file at path, or a note that it
// cannot be read.
func logTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
			return "(log unreadable: " + err.Error() + ")"
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	return string(b)
}
