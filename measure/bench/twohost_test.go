package bench

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/spicelike"
)

// The matrix's side of two-host mode: its flags, a refused driver, and
// (remote_linux_test.go) runs against a daemon.

// TestRefusedDriverLeavesTheWorkdir: a matrix refused by the daemon (here
// another daemon, with another secret: the wrong -remote) runs nothing and
// leaves the work directory as it found it, so the corrected command, at
// the right daemon, is not refused for a matrix.json the first wrote. A
// directory that held something before keeps it.
func TestRefusedDriverLeavesTheWorkdir(t *testing.T) {
	wrong := startTestDaemon(t, twohost.DaemonConfig{Secret: []byte("another daemon's secret, long enough")})
	right := startTestDaemon(t, twohost.DaemonConfig{})
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	root := t.TempDir()
	workdir := filepath.Join(root, "results", "path-x")
	m := &plan.Matrix{CCs: []string{plan.MatchedCC}, Arms: []measure.Arm{"tcp"}, Repeats: 1, Workload: w,
		Workdir: workdir, Remote: wrong.Addr().String()}
	if err := Run(context.Background(), m, Options{Remote: wrong.remote(testSecret)}); !errors.Is(err, twohost.ErrRefused) {
		t.Fatalf("the wrong Daemon: %v, want a refusal", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "results")); !errors.Is(err, os.ErrNotExist) {
		ents, _ := os.ReadDir(workdir)
		t.Errorf("the refused matrix left %s behind (%v; holding %v)", filepath.Join(root, "results"), err, ents)
	}
	fixed := *m
	fixed.Remote = right.Addr().String()
	c, err := fixed.Claim()
	if err != nil {
		t.Fatalf("the corrected command: %v", err)
	}
	c.Release()

	// A directory that was there keeps what it held, matrix.json too.
	other := *m
	other.Workdir = t.TempDir()
	keep := filepath.Join(other.Workdir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), &other, Options{Remote: wrong.remote(testSecret)}); !errors.Is(err, twohost.ErrRefused) {
		t.Fatalf("the wrong Daemon: %v, want a refusal", err)
	}
	if ents, _ := os.ReadDir(other.Workdir); len(ents) != 1 || ents[0].Name() != "notes.txt" {
		t.Errorf("after the refusal %s holds %v, want only notes.txt", other.Workdir, ents)
	}
	c, err = other.Claim() // writes matrix.json
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if err := Run(context.Background(), &other, Options{Remote: wrong.remote(testSecret)}); !errors.Is(err, twohost.ErrRefused) {
		t.Fatalf("the wrong Daemon: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(other.Workdir, "matrix.json")); err != nil {
		t.Errorf("a matrix.json that was there before the refusal: %v", err)
	}
}

// testSecret is the secret the tests' daemons share with their drivers.
var testSecret = []byte("a test secret, long enough")

// testDaemon is a two-host daemon serving the matrix's roles until the
// test ends.
type testDaemon struct {
	*twohost.Daemon
	log *syncBuffer
}

// syncBuffer is a log buffer the daemon writes while the test reads.
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

// probeCount is how many echoes the two-host path probe sends.
const probeCount = 50

func startTestDaemon(t *testing.T, cfg twohost.DaemonConfig) *testDaemon {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Secret == nil {
		cfg.Secret = testSecret
	}
	cfg.Env, cfg.Check, cfg.MaxWithin = benchRoles, checkSpec, plan.MaxDuration+10*time.Minute
	buf := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	d, err := twohost.Listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the daemon did not stop within 10 s of its context ending")
		}
	})
	return &testDaemon{Daemon: d, log: buf}
}

func (td *testDaemon) remote(secret []byte) *twohost.Client {
	return &twohost.Client{Addr: td.Addr().String(), Secret: secret}
}
