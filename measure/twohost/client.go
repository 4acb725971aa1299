package twohost

import (
	"context"
	"crypto/hmac"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/measure/rig"

	"github.com/shakenfist/quicbench/internal/buildinfo"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// Client is the driver's side of two-host mode, the ends of an
// experiment's runs (loop.Ends): each run's server runs on the host of a
// Daemon, its client here, over the path between them as found. No link is
// built; each run records a short probe of the path taken just before it
// (results.Link.Probe).
type Client struct {
	// Addr is the daemon's control address, HOST:PORT.
	Addr string
	// Secret is the secret shared with the daemon (ReadSecretFile), at
	// least MinSecretLen bytes. It is never recorded.
	Secret []byte
	// Local, when set, is the network namespace the driver's sockets and
	// the client processes live in (tests, embedding); nil is this
	// process's own.
	Local *shapedlink.Namespace
	// Env names the client processes' role variables: the roles of the
	// experiment whose specs the daemon's server is given.
	Env rig.RoleEnv
	// Logger receives the runs' warnings; nil is slog.Default.
	Logger *slog.Logger

	mu   sync.Mutex
	sess *remoteSession // open session, if any
	// source, when set, is the address the control connection comes
	// from (tests).
	source net.IP
}

// Validate says what is wrong with the address and the secret.
func (r *Client) Validate() []error {
	var errs []error
	host, port, err := net.SplitHostPort(r.Addr)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		errs = append(errs, fmt.Errorf("-remote %q is not HOST:PORT (e.g. server.example:%d)", r.Addr, DefaultPort))
	}
	if len(r.Secret) < MinSecretLen {
		errs = append(errs, fmt.Errorf("the shared secret is %d bytes; give at least %d", len(r.Secret), MinSecretLen))
	}
	return errs
}

// remoteSession is an authenticated control connection to the daemon.
type remoteSession struct {
	cc *ctlConn
	// peerIP is the daemon's address as dialled: the probe and the data
	// connections go there, whatever address the daemon sees itself at
	// (it may be behind NAT).
	peerIP net.IP
}

// dial makes a connection of network to address from the driver's
// namespace.
func (r *Client) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if r.Local != nil {
		return r.Local.DialContext(ctx, network, address)
	}
	d := &net.Dialer{}
	if r.source != nil && network == "tcp" {
		d.LocalAddr = &net.TCPAddr{IP: r.source}
	}
	return d.DialContext(ctx, network, address)
}

// session returns the open session, opening one if need be.
func (r *Client) session(ctx context.Context) (*remoteSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		return r.sess, nil
	}
	s, err := r.openSession(ctx)
	if err != nil {
		return nil, err
	}
	r.sess = s
	return s, nil
}

// openRetries is how many times a driver tries again when the daemon
// displaced its connection before its proof (preauth.go), with
// openRetryGap, doubling, between tries.
const (
	openRetries  = 4
	openRetryGap = 100 * time.Millisecond
)

// errRetry marks a refusal after which the driver may try again at once.
type errRetry struct{ error }

func (e errRetry) Unwrap() error { return e.error }

// openSession opens a session, trying again when the daemon says it may
// (a connection displaced by newer ones before its proof, as when
// someone floods the daemon with connections from the driver's address).
func (r *Client) openSession(ctx context.Context) (*remoteSession, error) {
	gap := openRetryGap
	for try := 0; ; try++ {
		s, err := r.open(ctx)
		var again errRetry
		if err == nil || !errors.As(err, &again) || try == openRetries {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(gap):
		}
		gap *= 2
	}
}

// drop closes s, if it is still the open session, so that the next run
// opens another: after an error its state is unknown.
func (r *Client) drop(s *remoteSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == s {
		r.sess = nil
	}
	s.cc.c.Close()
}

// Close ends the session, if one is open: the daemon then accepts the next
// driver.
func (r *Client) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		_ = r.sess.cc.send(ctlMsg{Op: "bye"}, remoteHandshakeTimeout)
		r.sess.cc.c.Close()
		r.sess = nil
	}
}

// open dials the daemon and runs the driver's half of the handshake: it
// proves it holds the secret, and checks that the daemon does too.
func (r *Client) open(ctx context.Context) (*remoteSession, error) {
	dctx, cancel := context.WithTimeout(ctx, remoteHandshakeTimeout)
	defer cancel()
	c, err := r.dial(dctx, "tcp", r.Addr)
	if err != nil {
		return nil, fmt.Errorf("reaching the two-host daemon at %s: %w (is the daemon running with -serve, and is its TCP port open?)", r.Addr, err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	cc := newCtlConn(c)
	fail := func(err error) (*remoteSession, error) {
		c.Close()
		return nil, err
	}
	m, err := cc.recv(remoteHandshakeTimeout)
	switch {
	case err != nil:
		return fail(fmt.Errorf("%s did not greet as a quicbench daemon: %v", r.Addr, err))
	case m.Op == "refused" && m.Retry:
		return fail(errRetry{fmt.Errorf("%w: the daemon at %s refused: %s", ErrRefused, r.Addr, m.Why)})
	case m.Op == "refused":
		return fail(fmt.Errorf("%w: the daemon at %s refused: %s", ErrRefused, r.Addr, m.Why))
	case m.Op != "hello":
		return fail(fmt.Errorf("%s did not greet as a quicbench daemon (it sent %q)", r.Addr, m.Op))
	case m.Version != remoteProtocol:
		return fail(fmt.Errorf("%w: the daemon at %s speaks protocol version %d and this driver %d: run the same quicbench version on both hosts",
			ErrRefused, r.Addr, m.Version, remoteProtocol))
	case len(m.Nonce) != remoteNonceLen:
		return fail(fmt.Errorf("%w: the daemon at %s sent a %d-byte challenge, not %d", ErrRefused, r.Addr, len(m.Nonce), remoteNonceLen))
	}
	dnonce := m.Nonce
	cnonce, err := newNonce()
	if err != nil {
		return fail(err)
	}
	auth := ctlMsg{Op: "auth", Version: remoteProtocol, Nonce: cnonce, Proof: remoteProof(r.Secret, "client", dnonce, cnonce)}
	if err := cc.send(auth, remoteHandshakeTimeout); err != nil {
		return fail(fmt.Errorf("sending the proof to %s: %w", r.Addr, err))
	}
	m, err = cc.recv(remoteHandshakeTimeout)
	switch {
	case err != nil:
		return fail(fmt.Errorf("the daemon at %s did not answer the proof: %v", r.Addr, err))
	case m.Op == "refused" && m.Retry:
		return fail(errRetry{fmt.Errorf("%w: the daemon at %s refused: %s", ErrRefused, r.Addr, m.Why)})
	case m.Op == "refused":
		return fail(fmt.Errorf("%w: the daemon at %s refused: %s", ErrRefused, r.Addr, m.Why))
	case m.Op != "welcome" || !hmac.Equal(m.Proof, remoteProof(r.Secret, "server", cnonce, dnonce)):
		return fail(fmt.Errorf("%w: the daemon at %s could not prove it holds the secret (another -secret-file, or not the bench's Daemon); nothing was run",
			ErrRefused, r.Addr))
	}
	cc.limit = remoteMaxLine
	ip := c.RemoteAddr().(*net.TCPAddr).IP
	return &remoteSession{cc: cc, peerIP: ip}, nil
}

// probe sends probeCount UDP echoes of probeSize bytes, probeGap apart, to
// the daemon's probe port and says what came back.
func (r *Client) probe(ctx context.Context, s *remoteSession) (results.PathProbe, error) {
	var p results.PathProbe
	if err := s.cc.send(ctlMsg{Op: "probe"}, remoteOpTimeout); err != nil {
		return p, err
	}
	m, err := s.cc.expect("probing", remoteOpTimeout)
	if err != nil {
		return p, err
	}
	p.Peer = net.JoinHostPort(s.peerIP.String(), strconv.Itoa(m.Port))
	conn, err := r.dial(ctx, "udp", p.Peer)
	if err != nil {
		return p, fmt.Errorf("opening the probe's UDP socket: %w", err)
	}
	type echo struct {
		seq int
		at  time.Time
	}
	echoes := make(chan echo, probeCount)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 2*probeSize)
		for {
			n, err := conn.Read(buf)
			at := time.Now()
			if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			if err != nil || n != probeSize || string(buf[:len(probeMagic)]) != string(probeMagic) {
				continue // an ICMP error, or not one of ours
			}
			seq := int(binary.BigEndian.Uint32(buf[len(probeMagic):]))
			if seq < probeCount {
				select {
				case echoes <- echo{seq, at}:
				default:
				}
			}
		}
	}()
	sent := make([]time.Time, probeCount)
	pkt := make([]byte, probeSize)
	copy(pkt, probeMagic)
	tick := time.NewTicker(probeGap)
	for i := range probeCount {
		binary.BigEndian.PutUint32(pkt[len(probeMagic):], uint32(i))
		sent[i] = time.Now()
		if i == 0 {
			p.At = sent[i]
		}
		_, _ = conn.Write(pkt) // a send that fails is an echo that does not come back
		p.Sent++
		if i < probeCount-1 {
			<-tick.C
		}
	}
	tick.Stop()
	_ = conn.SetReadDeadline(time.Now().Add(probeWait))
	<-readDone
	conn.Close()
	close(echoes)
	answered := map[int]time.Duration{}
	for e := range echoes {
		if _, dup := answered[e.seq]; !dup {
			answered[e.seq] = e.at.Sub(sent[e.seq])
		}
	}
	var rtts []float64
	for _, d := range answered {
		rtts = append(rtts, float64(d)/float64(time.Millisecond))
	}
	p.Answered = len(rtts)
	p.LossPct = 100 * float64(p.Sent-p.Answered) / float64(p.Sent)
	if len(rtts) > 0 {
		p.RTTMinMs, _ = stats.Percentile(rtts, 0)
		p.RTTP50Ms, _ = stats.Percentile(rtts, 50)
		p.RTTP90Ms, _ = stats.Percentile(rtts, 90)
		p.RTTMaxMs, _ = stats.Percentile(rtts, 100)
	}
	if err := s.cc.send(ctlMsg{Op: "probe-done"}, remoteOpTimeout); err != nil {
		return p, err
	}
	if _, err := s.cc.expect("probed", remoteOpTimeout); err != nil {
		return p, err
	}
	return p, nil
}

// errDaemonRun is a run the daemon could not start: the session is fine.
type errDaemonRun struct{ why string }

func (e errDaemonRun) Error() string { return "the daemon could not start the server: " + e.why }

// start asks the daemon to start the run's server and waits until it
// listens: the data address to dial (the daemon's address as dialled, at
// the port the daemon gives) and the server's certificate, without its key.
func (r *Client) start(s *remoteSession, name string, spec any, within time.Duration) (string, transport.Certificate, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", transport.Certificate{}, err
	}
	if err := s.cc.send(ctlMsg{Op: "start", Run: name, Spec: b, Within: within}, remoteOpTimeout); err != nil {
		return "", transport.Certificate{}, err
	}
	// The daemon makes a key and waits up to 15 s for the server.
	m, err := s.cc.expect("ready", time.Minute)
	switch {
	case err != nil && m.Op == "error":
		return "", transport.Certificate{}, errDaemonRun{m.Why}
	case err != nil:
		return "", transport.Certificate{}, err
	case m.Certificate == nil || m.Port < 1 || m.Port > 65535:
		return "", transport.Certificate{}, errors.New("the daemon's ready message has no certificate or port")
	}
	return net.JoinHostPort(s.peerIP.String(), strconv.Itoa(m.Port)), *m.Certificate, nil
}

// finish tells the daemon the client has ended and returns its answer:
// the server's result, the end of its log and its exit status.
func (r *Client) finish(s *remoteSession) (ctlMsg, error) {
	if err := s.cc.send(ctlMsg{Op: "finish"}, remoteOpTimeout); err != nil {
		return ctlMsg{}, err
	}
	// The daemon gives the server 20 s to end, then 5 s after SIGTERM;
	// a result with every connection's series can be several MB, slow
	// over a slow path.
	return s.cc.expect("result", remoteOpTimeout)
}

// Ready opens an authenticated session with the daemon, unless one is
// open, before any run, so that a refusal (wrong secret, busy, another
// version) comes before anything runs rather than as a failed run each.
// A refusal wraps ErrRefused; a daemon that cannot be reached does not.
func (r *Client) Ready(ctx context.Context) error {
	_, err := r.session(ctx)
	return err
}

// Open readies one run between the two hosts: it records the path as
// found (no link, so no host state but the code that ran here) and a
// probe of it taken now. p is ignored: nothing is emulated.
func (r *Client) Open(ctx context.Context, dir string, _ shapedlink.Profile, run *results.Run) (rig.Stage, error) {
	log := r.log()
	run.Link = results.Link{Backend: "none", Applied: []string{"nothing emulated: the path to the daemon at " + r.Addr + " as found"}}
	if b, err := json.Marshal(buildinfo.Read()); err == nil {
		run.Host = b
	}
	s, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	st := &remoteStage{r: r, s: s, dir: dir, name: fmt.Sprintf("%s/%s/r%d", run.Cell.Dir(), run.Arm, run.Repeat), log: log}
	// An interruption ends the session, so the daemon stops the server.
	st.stop = context.AfterFunc(ctx, func() { r.drop(s) })
	probe, err := r.probe(ctx, s)
	if err != nil {
		st.stop()
		return nil, st.broken("probing the path", err)
	}
	run.Link.Probe = &probe
	if probe.Answered == 0 {
		log.Warn("no probe echo came back: is UDP open to the daemon's port?", "peer", probe.Peer)
	}
	return st, nil
}

func (r *Client) log() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}

// remoteStage is one run between the two hosts: the server on the
// daemon's host, the client here in r.Local.
type remoteStage struct {
	r    *Client
	s    *remoteSession
	dir  string
	name string
	log  *slog.Logger
	stop func() bool
	// started: the daemon runs the run's server until finish.
	started, finished bool
}

// broken drops the session after err, which the next run opens anew.
func (st *remoteStage) broken(what string, err error) error {
	st.r.drop(st.s)
	return fmt.Errorf("%s (session with the daemon at %s): %w; the next run opens a new session", what, st.r.Addr, err)
}

// StartServer asks the daemon to start the server: the daemon makes its
// own key pair, listens where it chooses and gives the client its half.
func (st *remoteStage) StartServer(_ context.Context, o transport.Options, within time.Duration, spec func(rig.RoleBase) any) (rig.RoleBase, error) {
	o.Certificate, o.QlogDir = transport.Certificate{}, ""
	sspec := spec(rig.RoleBase{Role: rig.RoleServer, Transport: o})
	// What was asked of the daemon; it adds the address, its own key and
	// the deadline.
	if err := results.WriteJSON(filepath.Join(st.dir, rig.RoleServer+"-spec.json"), sspec); err != nil {
		return rig.RoleBase{}, err
	}
	addr, cert, err := st.r.start(st.s, st.name, sspec, within)
	var notStarted errDaemonRun
	switch {
	case errors.As(err, &notStarted):
		return rig.RoleBase{}, err
	case err != nil:
		return rig.RoleBase{}, st.broken("starting the server", err)
	}
	st.started = true
	c := rig.RoleBase{Role: rig.RoleClient, Addr: addr, Out: filepath.Join(st.dir, rig.RoleClient+".json"), Deadline: time.Now().Add(within)}
	c.Transport.Certificate = cert
	return c, nil
}

// StartClient starts the client here, in r.Local.
func (st *remoteStage) StartClient(ctx context.Context, spec any, extra ...*os.File) (*exec.Cmd, error) {
	return st.r.Env.Start(ctx, st.r.Local, rig.RoleClient, spec, st.dir, extra...)
}

// EndServer asks the daemon to end the server (it gives it 20 s) and
// keeps the server's result and the end of its log in the run's
// directory. The daemon does not say whether it had to stop the server;
// one that exited cleanly counts as having ended by itself.
func (st *remoteStage) EndServer(context.Context, time.Duration) (bool, error) {
	st.finished = true
	fin, err := st.r.finish(st.s)
	if err != nil {
		return false, st.broken("collecting the server's result", err)
	}
	logPath := filepath.Join(st.dir, rig.RoleServer+".log")
	if err := os.WriteFile(logPath, []byte(fin.Log), 0o644); err != nil {
		st.log.Warn("writing the server's log", "err", err)
	}
	if fin.Result != nil {
		if err := results.WriteJSON(filepath.Join(st.dir, rig.RoleServer+".json"), fin.Result); err != nil {
			st.log.Warn("writing the server's result", "err", err)
		}
	} else {
		st.log.Warn("the server wrote no result", "why", fin.Why, "log", logPath)
	}
	if fin.Exit != "" {
		st.log.Warn("server exited with an error", "err", fin.Exit, "log", logPath)
	}
	return fin.Exit == "", nil
}

// Close ends a server the run left running: the daemon then stops it.
func (st *remoteStage) Close(*results.Run) {
	st.stop()
	if st.started && !st.finished {
		if _, err := st.r.finish(st.s); err != nil {
			st.r.drop(st.s)
		}
	}
}
