package spicelive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/internal/livetest"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// The runs re-execute the test binary as their roles.
func TestMain(m *testing.M) {
	MaybeRunRole()
	os.Exit(m.Run())
}

// smokeConfig is a short live matrix: one fast link, one repeat.
func smokeConfig(t *testing.T, profiles string, arms ...measure.Arm) Config {
	c := Config{Arms: arms, Readings: []string{ReadingLive}, Repeats: 1, Duration: 5 * time.Second, Warmup: time.Second,
		CC: "reno", KeyInterval: 250 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 500 * time.Millisecond,
		Reference: "1:100", Workdir: t.TempDir(), SessionTimeout: 30 * time.Second}
	c.Profiles = strings.Fields(profiles)
	return c
}

// ours lists the X servers, xterms and spicy processes a live run
// starts, by the marks only this rig gives them.
func ours(t *testing.T) []string {
	out, err := exec.Command("ps", "-eo", "pid,args").Output()
	if err != nil {
		t.Skip("ps:", err)
	}
	var left []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "-w "+password) || strings.Contains(line, typingTitle) || strings.Contains(line, busyTitle) ||
			strings.Contains(line, "xspice.conf") {
			left = append(left, strings.TrimSpace(line))
		}
	}
	return left
}

// TestLiveSmoke runs a real session (Xspice, spicy under Xvfb, keys by
// xdotool) through each arm of the tunnel over a fast shaped link, and
// checks that each was measured, that no key was answered faster than the
// round trip, and that nothing it started is left running.
func TestLiveSmoke(t *testing.T) {
	livetest.Need(t)
	if left := ours(t); len(left) > 0 {
		t.Skipf("a live session's programs are already running here: %v", left)
	}
	c := smokeConfig(t, "10:100", measure.TCP, measure.QUIC, measure.QUICPerChannel)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := Run(context.Background(), c, &progress, log); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	t.Logf("test output:\n%s", progress.String())
	cell, _, _ := c.cell("10:100")
	for _, arm := range c.Arms {
		dir := results.RunDir(c.ReadingDir(ReadingLive), cell, string(arm), 1)
		run, st, err := results.Check(dir, cell, string(arm), 1)
		if st != results.Measured {
			t.Errorf("%s: %v %v %s", arm, st, err, run.Failed)
			continue
		}
		var rec LiveRecord
		if err := results.ReadJSON(filepath.Join(dir, LiveFile), &rec); err != nil {
			t.Fatal(err)
		}
		a := rec.Analysis
		// 5 s of keys every 250 ms: about 20, 16 after the warm-up, all
		// answered on a fast link (fewer if a loaded machine slows xdotool).
		if len(a.Samples) < 8 || a.Unanswered > 2 {
			t.Errorf("%s: %d keys, %d measured, %d unanswered", arm, a.Keys, len(a.Samples), a.Unanswered)
		}
		for _, s := range a.Samples {
			if s.RTT < 9*time.Millisecond {
				t.Errorf("%s: a key answered after %v, faster than the 10 ms round trip", arm, s.RTT)
			}
		}
		if a.BusyDraws == 0 || a.TypingDraws < len(a.Samples) {
			t.Errorf("%s: %d busy draws and %d typing draws for %d keys", arm, a.BusyDraws, a.TypingDraws, len(a.Samples))
		}
		for _, f := range []string{ClientTrace, ServerTrace} {
			tr, err := ReadTrace(filepath.Join(dir, f))
			if err != nil {
				t.Errorf("%s %s: %v", arm, f, err)
				continue
			}
			if chans := tr.Channels(); len(chans) < 3 {
				t.Errorf("%s %s: %d channels traced, want main, display and inputs at least", arm, f, len(chans))
			}
		}
		if _, err := exec.LookPath("import"); err == nil && rec.Client.Screenshot == "" {
			t.Errorf("%s: no screenshot", arm)
		}
		if rec.Client.State == nil || rec.Client.State.Arm != transport.Arm(arm) {
			t.Errorf("%s: the client's carrier state says %+v", arm, rec.Client.State)
		}
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// Both tunnel ends get the same options, so the server end's secret is
// the client end's; each run has a secret of its own.
func TestTunnelHasASecret(t *testing.T) {
	a, b := tunnelOptions(Config{CC: "reno"}, measure.TCP), tunnelOptions(Config{}, measure.QUIC)
	if len(a.CarrierSecret) < transport.MinCarrierSecretLen || len(b.CarrierSecret) < transport.MinCarrierSecretLen ||
		bytes.Equal(a.CarrierSecret, b.CarrierSecret) {
		t.Errorf("secrets %q and %q: want one of at least %d bytes, new for every run", a.CarrierSecret, b.CarrierSecret, transport.MinCarrierSecretLen)
	}
	if a.CongestionControl != "reno" || b.CongestionControl != "" {
		t.Errorf("congestion control: tcp %q, quic %q", a.CongestionControl, b.CongestionControl)
	}
}

// TestLiveDeadSession kills a program of the session while keys are
// typed: Xspice's X server (the server role's) or spicy (the client
// role's). The run must fail, naming the program, rather than be recorded
// as measured; a failed run is redone by the same command
// (TestFailedRunIsRedoneOnResume).
func TestLiveDeadSession(t *testing.T) {
	livetest.Need(t)
	if left := ours(t); len(left) > 0 {
		t.Skipf("a live session's programs are already running here: %v", left)
	}
	for _, prog := range []string{"Xorg", "spicy"} {
		t.Run(prog, func(t *testing.T) {
			c := smokeConfig(t, "10:100", measure.TCP)
			c.Duration = 8 * time.Second
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
			var progress bytes.Buffer
			done := make(chan error, 1)
			go func() { done <- Run(context.Background(), c, &progress, log) }()
			cell, _, _ := c.cell("10:100")
			dir := results.RunDir(c.ReadingDir(ReadingLive), cell, "tcp", 1)
			// Once the session is up, typing starts after -settle.
			waitUntil(t, done, 60*time.Second, "the session up", func() bool {
				b, _ := os.ReadFile(filepath.Join(dir, rig.RoleClient+".log"))
				return bytes.Contains(b, []byte("the session is up"))
			})
			time.Sleep(c.Settle + 1500*time.Millisecond)
			killed := killOurs(t, prog, c.Workdir)
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("the run went on a minute after %s was killed", prog)
			}
			t.Logf("killed %s (pid %d) 1.5 s into the typing:\n%s", prog, killed, progress.String())
			if !errors.Is(err, ErrRunsFailed) {
				t.Fatalf("Run: %v, want the run failed", err)
			}
			run, st, _ := results.Check(dir, cell, "tcp", 1)
			named := strings.Contains(run.Failed, prog+" exited") && strings.Contains(run.Failed, "signal: killed")
			// An xterm that lost its display can be seen to exit before
			// Xorg is on a busy host: the session died all the same.
			named = named || prog == "Xorg" && strings.Contains(run.Failed, "the session died: xterm exited")
			if st != results.FailedRun || !named {
				t.Fatalf("recorded as %v: %q; want failed, saying %s was killed", st, run.Failed, prog)
			}
		})
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// waitUntil polls cond until it holds, failing the test if done (the
// run) ends first or timeout passes.
func waitUntil(t *testing.T, done <-chan error, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(timeout)
	for !cond() {
		select {
		case err := <-done:
			t.Fatalf("the run ended before %s: %v", what, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(end) {
			t.Fatalf("no %s within %v", what, timeout)
		}
	}
}

// killOurs sends SIGKILL to the process named comm that a run in workdir
// started (its environment names the run's spec there) and returns its
// pid.
func killOurs(t *testing.T, comm, workdir string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		name, _ := os.ReadFile(filepath.Join(p, "comm"))
		env, _ := os.ReadFile(filepath.Join(p, "environ"))
		if strings.TrimSpace(string(name)) != comm || !bytes.Contains(env, []byte("="+workdir+string(filepath.Separator))) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("killing %s: %v", comm, err)
		}
		return pid
	}
	t.Fatalf("no %s of this run is running", comm)
	return 0
}

// TestLiveSmokeQuinn runs a real session through quinn's carrier
// (quinn-cubic): it is measured, both tunnel ends record quinn's cubic
// read back with offload off, and no quinn end or session program is left.
func TestLiveSmokeQuinn(t *testing.T) {
	bin, err := quinncarrier.Binary(t.Context())
	if errors.Is(err, quinncarrier.ErrUnavailable) {
		t.Skipf("the quinn arms need the quicbench-quinn program (docs/quinn.md): %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	livetest.Need(t)
	if left := ours(t); len(left) > 0 {
		t.Skipf("a live session's programs are already running here: %v", left)
	}
	// The ends' directories are made under TMPDIR, and named in their
	// arguments: so this run's ends are told from other tests'.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	c := smokeConfig(t, "10:100", "quinn-cubic")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := Run(context.Background(), c, &progress, log); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	cell, _, _ := c.cell("10:100")
	dir := results.RunDir(c.ReadingDir(ReadingLive), cell, "quinn-cubic", 1)
	if run, st, err := results.Check(dir, cell, "quinn-cubic", 1); st != results.Measured {
		t.Fatalf("quinn-cubic: %v %v %s", st, err, run.Failed)
	}
	var rec LiveRecord
	if err := results.ReadJSON(filepath.Join(dir, LiveFile), &rec); err != nil {
		t.Fatal(err)
	}
	if a := rec.Analysis; len(a.Samples) < 8 || a.Unanswered > 2 {
		t.Errorf("%d keys, %d measured, %d unanswered", a.Keys, len(a.Samples), a.Unanswered)
	}
	for _, st := range []*transport.State{rec.Client.State, rec.Server.State} {
		if st == nil || st.Arm != "quinn-cubic" || st.CongestionControl != "quinn-cubic" || len(st.QUIC) != 1 || st.QUIC[0].GSO {
			t.Fatalf("a tunnel end's state: %+v", st)
		}
		// The statistics the end wrote when it stopped: the session's
		// bytes, not the handshake's (or none, on the server).
		if q := st.QUIC[0].Stats; q.BytesSent < 10<<10 || q.PacketsSent < 50 {
			t.Errorf("the %s end's connection: %d bytes in %d packets sent, want its statistics at exit", st.Role, q.BytesSent, q.PacketsSent)
		}
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, e := range exes {
		if p, err := os.Readlink(e); err == nil && p == bin {
			args, err := os.ReadFile(filepath.Join(filepath.Dir(e), "cmdline"))
			if err == nil && bytes.Contains(args, []byte(tmp)) {
				t.Errorf("a quinn end is left running: %s", strings.ReplaceAll(string(args), "\x00", " "))
			}
		}
	}
}

// Without the quinn program a run of a quinn arm is refused before
// anything runs, naming the arm and the cause.
func TestQuinnArmRefusedWithoutItsProgram(t *testing.T) {
	t.Setenv(quinncarrier.BinaryEnv, filepath.Join(t.TempDir(), "no-such-program"))
	c := smokeConfig(t, "10:100", measure.TCP, "quinn-bbr")
	err := Run(context.Background(), c, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "-arms quinn-bbr") || !strings.Contains(err.Error(), quinncarrier.BinaryEnv) {
		t.Fatalf("Run without the quinn program: %v, want it refused naming the arm and $%s", err, quinncarrier.BinaryEnv)
	}
	if left, _ := os.ReadDir(c.Workdir); len(left) > 0 {
		t.Errorf("the refused run wrote %d entries in its work directory", len(left))
	}
}
