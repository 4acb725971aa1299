package twohost

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/measure/rig"

	"github.com/shakenfist/quicbench/shapedlink"
)

// DaemonConfig is the server end of two-host mode.
type DaemonConfig struct {
	// Addr is the control address to listen on, such as 0.0.0.0:7390.
	// The path probe answers on UDP at the same port number, and each
	// run's server listens on rig.ServerPort (TCP and UDP).
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
	// HandshakeTimeout bounds a connection's whole handshake, from its
	// greeting to its proof of the secret; zero is 5 s. How many may be
	// under way at once is bounded per source address (preauth.go).
	HandshakeTimeout time.Duration
	// Env names the server processes' role variables, and Check says why
	// the daemon will not run a driver's spec (its experiment's checks),
	// or nil. MaxWithin bounds how long a run's server may run.
	Env       rig.RoleEnv
	Check     func(spec json.RawMessage) error
	MaxWithin time.Duration
	// now, when set, is the daemon's clock, and idleTicks, when set, the
	// idle timer's ticks (tests).
	now       func() time.Time
	idleTicks <-chan time.Time
}

// Daemon serves two-host runs, one session at a time.
type Daemon struct {
	cfg  DaemonConfig
	log  *slog.Logger
	ln   net.Listener
	port int
	dir  string

	mu     sync.Mutex
	active string // the peer of the authenticated session, if any
	// lastEnd is when the last session ended, or Serve began.
	lastEnd time.Time
	// preAuth are the connections waiting for a proof of the secret, by
	// source, oldest first, preAuthCount how many in all (admit).
	preAuth      map[string][]*preAuth
	preAuthCount int
	preAuthSeq   uint64
	runs         int
}

// Listen checks cfg and listens on its address; Serve then answers
// drivers.
func Listen(ctx context.Context, cfg DaemonConfig) (*Daemon, error) {
	if len(cfg.Secret) < MinSecretLen {
		return nil, fmt.Errorf("the daemon's secret is %d bytes; give at least %d", len(cfg.Secret), MinSecretLen)
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = daemonHandshakeTimeout
	}
	if cfg.Check == nil || cfg.Env.Role == "" || cfg.MaxWithin <= 0 {
		return nil, errors.New("the daemon needs its experiment's role variables, its spec check and a longest run")
	}
	if cfg.HandshakeTimeout < 0 {
		return nil, fmt.Errorf("the handshake timeout %v is negative", cfg.HandshakeTimeout)
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("-idle-timeout %v is negative: give a duration such as 30m", cfg.IdleTimeout)
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("-serve %q is not HOST:PORT (e.g. 0.0.0.0:%d): %v", cfg.Addr, DefaultPort, err)
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
	return &Daemon{cfg: cfg, log: log, ln: ln, port: ln.Addr().(*net.TCPAddr).Port, dir: dir}, nil
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
	d.mu.Lock()
	d.lastEnd = d.cfg.now()
	d.mu.Unlock()
	var idle <-chan time.Time
	var timer *time.Timer
	switch {
	case d.cfg.IdleTimeout > 0 && d.cfg.idleTicks != nil:
		idle = d.cfg.idleTicks
	case d.cfg.IdleTimeout > 0:
		timer = time.NewTimer(d.cfg.IdleTimeout)
		defer timer.Stop()
		idle = timer.C
	}
	d.log.Info("two-host daemon listening", "addr", d.ln.Addr().String(), "probe", "udp port "+strconv.Itoa(d.port),
		"data", "tcp and udp port "+strconv.Itoa(rig.ServerPort), "idle_timeout", d.cfg.IdleTimeout)
	for {
		select {
		case <-ctx.Done():
			d.log.Info("stopping")
			return nil
		case at := <-idle:
			wait := d.idleLeft(at)
			if wait <= 0 {
				d.log.Info("no session for the idle timeout; exiting", "idle_timeout", d.cfg.IdleTimeout)
				return nil
			}
			if timer != nil {
				timer.Reset(wait)
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

// idleLeft is how much of the idle timeout is left at the idle timer's
// tick at: all of it while a session is open, else the timeout less the
// time from the last session's end (or Serve's start) to at; 0 or less
// means the daemon has been idle long enough.
func (d *Daemon) idleLeft(at time.Time) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active != "" {
		return d.cfg.IdleTimeout
	}
	return d.cfg.IdleTimeout - at.Sub(d.lastEnd)
}

// refuse sends one refusal line and logs it; retry says the driver may
// try again at once.
func (d *Daemon) refuse(cc *ctlConn, peer, why string, retry bool) {
	_ = cc.send(ctlMsg{Op: "refused", Why: why, Retry: retry}, d.cfg.HandshakeTimeout)
	d.log.Warn("refused a driver", "peer", peer, "why", why)
}

// handle is one connection: refused at once when a session is active,
// else authenticated (admit bounds how many wait for a proof), then
// served as the session.
func (d *Daemon) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	peer := c.RemoteAddr().String()
	cc := newCtlConn(c)
	d.mu.Lock()
	if d.active != "" {
		who := d.active
		d.mu.Unlock()
		d.refuse(cc, peer, "one run at a time: a run from "+who+" is in progress", false)
		return
	}
	p := d.admit(c)
	d.mu.Unlock()
	welcome, err := d.authenticate(cc, p.since.Add(d.cfg.HandshakeTimeout))
	d.mu.Lock()
	d.forget(p)
	switch {
	case p.displaced.Load():
		d.mu.Unlock()
		d.refuse(cc, peer, displacedWhy(p.source), true)
		return
	case err != nil:
		d.mu.Unlock()
		d.refuse(cc, peer, err.Error(), false)
		return
	case d.active != "":
		// Another driver finished its handshake first.
		who := d.active
		d.mu.Unlock()
		d.refuse(cc, peer, "one run at a time: a run from "+who+" is in progress", false)
		return
	}
	// The session is this driver's before it hears so.
	d.active = peer
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.active, d.lastEnd = "", d.cfg.now()
		d.mu.Unlock()
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

// authenticate is the daemon's half of the handshake, all of it before
// deadline: its challenge sent and the driver's proof checked. It returns
// the daemon's own proof, to send once the session is claimed, or the
// reason to refuse, as the driver will read it.
func (d *Daemon) authenticate(cc *ctlConn, deadline time.Time) (ctlMsg, error) {
	dnonce, err := newNonce()
	if err != nil {
		return ctlMsg{}, err
	}
	if err := cc.send(ctlMsg{Op: "hello", Version: remoteProtocol, Nonce: dnonce}, time.Until(deadline)); err != nil {
		return ctlMsg{}, fmt.Errorf("sending the challenge: %v", err)
	}
	m, err := cc.recv(time.Until(deadline))
	switch {
	case err != nil && !time.Now().Before(deadline):
		return ctlMsg{}, fmt.Errorf("no proof of the secret within %v of connecting", d.cfg.HandshakeTimeout)
	case err != nil:
		return ctlMsg{}, fmt.Errorf("no proof of the secret: %v", err)
	case m.Op != "auth":
		return ctlMsg{}, fmt.Errorf("no proof of the secret: expected \"auth\", got %q", m.Op)
	case m.Version != remoteProtocol:
		return ctlMsg{}, fmt.Errorf("the driver speaks protocol version %d and this daemon %d: run the same quicbench version on both hosts", m.Version, remoteProtocol)
	case len(m.Nonce) != remoteNonceLen:
		return ctlMsg{}, fmt.Errorf("the driver's challenge is %d bytes, not %d", len(m.Nonce), remoteNonceLen)
	case !hmac.Equal(m.Proof, remoteProof(d.cfg.Secret, "client", dnonce, m.Nonce)):
		return ctlMsg{}, errors.New("wrong proof of the secret: do both hosts' -secret-file hold the same secret?")
	}
	return ctlMsg{Op: "welcome", Version: remoteProtocol, Proof: remoteProof(d.cfg.Secret, "server", m.Nonce, dnonce)}, nil
}
