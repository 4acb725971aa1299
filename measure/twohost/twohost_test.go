package twohost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
)

var testSecret = []byte("a test secret, long enough")

// syncBuffer is a bytes.Buffer a daemon's logger and a test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testDaemon is a daemon on loopback, serving until the test ends.
type testDaemon struct {
	*Daemon
	log    *syncBuffer
	served chan error
}

func startTestDaemon(t *testing.T, cfg DaemonConfig) *testDaemon {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Secret == nil {
		cfg.Secret = testSecret
	}
	if cfg.Check == nil {
		cfg.Env = rig.RoleEnv{Role: "QUICBENCH_TWOHOST_TEST_ROLE", Spec: "QUICBENCH_TWOHOST_TEST_SPEC"}
		cfg.Check = func(json.RawMessage) error { return nil }
		cfg.MaxWithin = time.Hour
	}
	buf := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	d, err := Listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	td := &testDaemon{Daemon: d, log: buf, served: make(chan error, 1)}
	go func() { td.served <- d.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-td.served:
		case <-time.After(10 * time.Second):
			t.Error("the daemon did not stop within 10 s of its context ending")
		}
	})
	return td
}

func (td *testDaemon) remote(secret []byte) *Client {
	return &Client{Addr: td.Addr().String(), Secret: secret}
}

// rawHello dials the daemon as a client that speaks the protocol by hand,
// and reads its first line.
func rawHello(t *testing.T, addr string) (net.Conn, *bufio.Reader, ctlMsg) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	return c, r, readLine(t, c, r)
}

func readLine(t *testing.T, c net.Conn, r *bufio.Reader) ctlMsg {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the daemon's line: %v (got %q)", err, line)
	}
	var m ctlMsg
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("the daemon's line %q is not JSON: %v", line, err)
	}
	return m
}

// expectRefusedAndClosed reads one refusal naming want, then the end of
// the connection.
func expectRefusedAndClosed(t *testing.T, c net.Conn, r *bufio.Reader, want string) {
	t.Helper()
	m := readLine(t, c, r)
	if m.Op != "refused" || !strings.Contains(m.Why, want) {
		t.Errorf("got %+v, want a refusal naming %q", m, want)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rest, err := r.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection stayed open after the refusal (read %q, %v)", rest, err)
	}
}

func TestRemoteHandshake(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	r := td.remote(testSecret)
	if err := r.Ready(context.Background()); err != nil {
		t.Fatalf("the same secret was refused: %v", err)
	}
	r.Close()
}

func TestRemoteRefusesWrongSecret(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	r := td.remote([]byte("not the daemon's secret at all"))
	err := r.Ready(context.Background())
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "wrong proof") {
		t.Fatalf("a wrong secret: %v, want ErrRefused saying the proof was wrong", err)
	}
	waitFor(t, "the daemon to log the refusal", func() bool { return strings.Contains(td.log.String(), "refused a driver") })
	// The refused driver did not take the Daemon: the right one gets in.
	good := td.remote(testSecret)
	if err := good.Ready(context.Background()); err != nil {
		t.Errorf("after a refusal, the right secret: %v", err)
	}
	good.Close()
}

func TestRemoteRefusesGarbage(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	c, r, hello := rawHello(t, td.Addr().String())
	if hello.Op != "hello" || hello.Version != remoteProtocol || len(hello.Nonce) != remoteNonceLen {
		t.Fatalf("greeting %+v", hello)
	}
	if _, err := c.Write([]byte("GET / HTTP/1.0\n")); err != nil {
		t.Fatal(err)
	}
	expectRefusedAndClosed(t, c, r, "not a quicbench control message")
}

func TestRemoteRefusesSilence(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{HandshakeTimeout: 300 * time.Millisecond})
	c, r, _ := rawHello(t, td.Addr().String())
	expectRefusedAndClosed(t, c, r, "no proof")
}

// TestRemoteRefusesBadProof: a proof made for another challenge (a
// replay), with another secret, or none at all, is refused.
func TestRemoteRefusesBadProof(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	for name, proof := range map[string]func(dn, cn []byte) []byte{
		"replayed":       func(dn, cn []byte) []byte { return remoteProof(testSecret, "client", make([]byte, remoteNonceLen), cn) },
		"another secret": func(dn, cn []byte) []byte { return remoteProof([]byte("another secret, 16+ bytes"), "client", dn, cn) },
		"server's label": func(dn, cn []byte) []byte { return remoteProof(testSecret, "server", dn, cn) },
		"none":           func(dn, cn []byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			c, r, hello := rawHello(t, td.Addr().String())
			cn, _ := newNonce()
			b, _ := json.Marshal(ctlMsg{Op: "auth", Version: remoteProtocol, Nonce: cn, Proof: proof(hello.Nonce, cn)})
			c.Write(append(b, '\n'))
			expectRefusedAndClosed(t, c, r, "wrong proof")
		})
	}
}

func TestRemoteRefusesOtherVersion(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	c, r, hello := rawHello(t, td.Addr().String())
	cn := make([]byte, remoteNonceLen)
	b, _ := json.Marshal(ctlMsg{Op: "auth", Version: remoteProtocol + 1, Nonce: cn, Proof: remoteProof(testSecret, "client", hello.Nonce, cn)})
	c.Write(append(b, '\n'))
	expectRefusedAndClosed(t, c, r, "protocol version")
}

// fakeDaemon greets like a daemon and answers the driver's proof with
// answer(driver's auth, its own nonce), as a daemon without the secret
// would have to.
func fakeDaemon(t *testing.T, version int, answer func(auth ctlMsg, dnonce []byte) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		cc := newCtlConn(c)
		dn, _ := newNonce()
		cc.send(ctlMsg{Op: "hello", Version: version, Nonce: dn}, time.Second)
		auth, err := cc.recv(5 * time.Second)
		if err != nil {
			return
		}
		cc.send(ctlMsg{Op: "welcome", Version: version, Proof: answer(auth, dn)}, time.Second)
		cc.recv(5 * time.Second) // until the driver hangs up
	}()
	return ln.Addr().String()
}

func TestDriverRefusesDaemonWithoutSecret(t *testing.T) {
	for name, answer := range map[string]func(ctlMsg, []byte) []byte{
		"random proof":   func(ctlMsg, []byte) []byte { n, _ := newNonce(); return n },
		"no proof":       func(ctlMsg, []byte) []byte { return nil },
		"driver's proof": func(a ctlMsg, _ []byte) []byte { return a.Proof },
		"another's proof": func(a ctlMsg, dn []byte) []byte {
			return remoteProof([]byte("another secret, 16+ bytes"), "server", a.Nonce, dn)
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := &Client{Addr: fakeDaemon(t, remoteProtocol, answer), Secret: testSecret}
			err := r.Ready(context.Background())
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "could not prove") {
				t.Errorf("a daemon without the secret: %v, want ErrRefused saying it could not prove it", err)
			}
		})
	}
	// The control: a daemon that does hold the secret is accepted.
	r := &Client{Addr: fakeDaemon(t, remoteProtocol, func(a ctlMsg, dn []byte) []byte {
		return remoteProof(testSecret, "server", a.Nonce, dn)
	}), Secret: testSecret}
	if err := r.Ready(context.Background()); err != nil {
		t.Errorf("a daemon with the secret: %v", err)
	}
	r.Close()
}

func TestDriverRefusesOtherVersion(t *testing.T) {
	r := &Client{Addr: fakeDaemon(t, remoteProtocol+1, func(ctlMsg, []byte) []byte { return nil }), Secret: testSecret}
	err := r.Ready(context.Background())
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("a daemon of another version: %v, want ErrRefused naming the version", err)
	}
}

func TestRemoteRefusesSecondSession(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	first := td.remote(testSecret)
	if err := first.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := td.remote(testSecret)
	err := second.Ready(context.Background())
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "one run at a time") {
		t.Fatalf("a second session: %v, want a busy refusal", err)
	}
	// Refused before any proof: a busy daemon says so even to a stranger.
	c, _, m := rawHello(t, td.Addr().String())
	if m.Op != "refused" || !strings.Contains(m.Why, "in progress") {
		t.Errorf("a connection while busy was greeted with %+v, want a busy refusal", m)
	}
	c.Close()
	first.Close()
	waitFor(t, "the daemon to take a session once the first has ended", func() bool {
		if err := second.Ready(context.Background()); err != nil {
			return false
		}
		second.Close()
		return true
	})
}

func TestDaemonIdleTimeout(t *testing.T) {
	const idle = 500 * time.Millisecond
	td := startTestDaemon(t, DaemonConfig{IdleTimeout: idle})
	// A session, held longer than the idle timeout, keeps it up.
	r := td.remote(testSecret)
	if err := r.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-td.served:
		t.Fatalf("the daemon ended during a session: %v", err)
	case <-time.After(3 * idle):
	}
	r.Close()
	start := time.Now()
	select {
	case err := <-td.served:
		td.served <- err // for the cleanup
		if err != nil {
			t.Errorf("Serve after the idle timeout: %v, want nil", err)
		}
		if d := time.Since(start); d < idle/2 {
			t.Errorf("the daemon ended %v after the session, before its idle timeout of %v", d, idle)
		}
	case <-time.After(10 * idle):
		t.Fatalf("the daemon still serves %v after its last session, with an idle timeout of %v", 10*idle, idle)
	}
	if c, err := net.DialTimeout("tcp", td.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the daemon still accepts connections after its idle timeout")
	}
}

// TestDaemonIdleTickAsSessionEnds makes the race happen: the idle timer
// fires at the moment a session ends (on a clock the test sets). The
// daemon keeps serving until the idle timeout has passed since that end,
// then exits at the next tick.
func TestDaemonIdleTickAsSessionEnds(t *testing.T) {
	const idle = time.Minute
	var mu sync.Mutex
	clock := time.Unix(1e9, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	set := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); clock = time.Unix(1e9, 0).Add(d) }
	ticks := make(chan time.Time)
	td := startTestDaemon(t, DaemonConfig{IdleTimeout: idle, now: now, idleTicks: ticks})
	tickAt := func(what string, at time.Time) {
		t.Helper()
		select {
		case ticks <- at:
		case err := <-td.served:
			td.served <- err
			t.Fatalf("%s: the daemon ended (%v) at %v after it began, idle timeout %v", what, err, now().Sub(time.Unix(1e9, 0)), idle)
		}
	}
	tick := func(what string) { t.Helper(); tickAt(what, now()) }
	set(2 * idle)
	r := td.remote(testSecret)
	if err := r.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	tick("a tick during the session")
	r.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		td.mu.Lock()
		active := td.active
		td.mu.Unlock()
		if active == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session did not end within 10 s of the driver closing it")
		}
	}
	// The tick comes as the session ends, long after the daemon began.
	tick("the tick as the session ends")
	set(3*idle - time.Second)
	tick("a tick a second short of the idle timeout after the end")
	tick("the next tick, to see the one before was taken without exiting")
	// A tick from before the session's end, read after it.
	tickAt("a stale tick", time.Unix(1e9, 0).Add(2*idle-time.Second))
	tick("the tick after a stale one")
	set(3 * idle)
	ticks <- now()
	select {
	case err := <-td.served:
		td.served <- err
		if err != nil {
			t.Errorf("Serve: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the daemon still serves at the idle timeout after the session ended")
	}
}

// TestProbeAnswersOnlyThePeer runs the path probe over loopback, and
// checks that the daemon answers the session's peer only, and only while
// the probe lasts.
func TestProbeAnswersOnlyThePeer(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	r := td.remote(testSecret)
	s, err := r.session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := r.probe(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Sent != probeCount || p.Answered != probeCount || p.LossPct != 0 || p.RTTMinMs <= 0 ||
		p.RTTMinMs > p.RTTP50Ms || p.RTTP50Ms > p.RTTP90Ms || p.RTTP90Ms > p.RTTMaxMs || p.RTTMaxMs > 1000 || p.At.IsZero() {
		t.Errorf("probe over loopback: %+v", p)
	}

	port := strconv.Itoa(td.Addr().(*net.TCPAddr).Port)
	echo := func(from string) bool {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)}, &net.UDPAddr{IP: net.ParseIP("127.0.0.1"), Port: td.Addr().(*net.TCPAddr).Port})
		if err != nil {
			t.Skipf("cannot send from %s: %v", from, err)
		}
		defer c.Close()
		pkt := make([]byte, probeSize)
		copy(pkt, probeMagic)
		c.Write(pkt)
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err = c.Read(make([]byte, 2*probeSize))
		return err == nil
	}
	if echo("127.0.0.1") {
		t.Errorf("the daemon answered an echo on udp port %s outside a probe", port)
	}
	if err := s.cc.send(ctlMsg{Op: "probe"}, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.cc.expect("probing", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	fromOther, fromPeer := echo("127.0.0.2"), echo("127.0.0.1")
	if err := s.cc.send(ctlMsg{Op: "probe-done"}, time.Second); err != nil {
		t.Fatal(err)
	}
	m, err := s.cc.expect("probed", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fromOther {
		t.Error("the daemon answered an address other than the session's peer")
	}
	if !fromPeer || m.Echoed != 1 {
		t.Errorf("the peer's echo: answered %v, the daemon counts %d; want answered, 1", fromPeer, m.Echoed)
	}
}

func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "0123456789abcdef\n", 0o600)
	if b, err := ReadSecretFile(good); err != nil || string(b) != "0123456789abcdef" {
		t.Errorf("a 16-byte secret with a newline: %q, %v", b, err)
	}
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"short", "0123456789abcde\n", 0o600, "at least 16"},
		{"newline only", "\n", 0o600, "at least 16"},
		{"world", "0123456789abcdef", 0o644, "chmod 600"},
		{"group", "0123456789abcdef", 0o640, "chmod 600"},
		{"group-write", "0123456789abcdef", 0o620, "chmod 600"},
	} {
		_, err := ReadSecretFile(write(tc.name, tc.content, tc.mode))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadSecretFile(""); err == nil || !strings.Contains(err.Error(), "-secret-file is required") {
		t.Errorf("no file: %v", err)
	}
	if _, err := ReadSecretFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file was accepted")
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("timed out waiting for %s", what)
}

// TestPathProbeValidates: a run record with an impossible probe does not
// validate; a possible one does.
func TestPathProbeValidates(t *testing.T) {
	now := time.Now()
	run := results.Run{Schema: results.SchemaVersion, Cell: results.Cell{Profile: results.PathProfile, CC: "reno"}, Arm: "tcp", Repeat: 1,
		Started: now, Finished: now.Add(time.Second), Duration: 5 * time.Second, Warmup: time.Second}
	run.Link.Probe = &results.PathProbe{Sent: 50, Answered: 49, LossPct: 2, RTTMinMs: 20, RTTP50Ms: 21, RTTP90Ms: 22, RTTMaxMs: 30, At: now}
	if err := run.Validate(); err != nil {
		t.Errorf("a possible probe: %v", err)
	}
	for name, p := range map[string]results.PathProbe{
		"more answered than sent": {Sent: 50, Answered: 51},
		"negative round trip":     {Sent: 50, Answered: 50, RTTMinMs: -1},
		"NaN loss":                {Sent: 50, LossPct: math.NaN()},
	} {
		run.Link.Probe = &p
		if err := run.Validate(); err == nil || !strings.Contains(err.Error(), "probe") {
			t.Errorf("%s: %v, want an error about the probe", name, err)
		}
	}
}
