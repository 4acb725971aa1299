package overlink

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

func TestMain(m *testing.M) { shapedlinktest.Main(m) }

// testConfig is a run over a fresh 20:100 link on the emulator.
func testConfig(t *testing.T, client ...string) Config {
	t.Helper()
	p, err := shapedlink.ParseProfile("20:100")
	if err != nil {
		t.Fatal(err)
	}
	return Config{Profile: p, Link: shapedlink.Options{Backend: shapedlink.BackendEmulator}, Client: client, Stderr: &strings.Builder{}}
}

// TestRunCounts: Run passes the link's addresses to the client, returns
// its exit status, and reads the link's counters into the record.
func TestRunCounts(t *testing.T) {
	shapedlinktest.Need(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed (the client sends with its /dev/udp)")
	}
	c := testConfig(t, "bash", "-c", `test "$QB_SERVER_ADDR" = 198.18.0.1 || exit 1; for i in 1 2 3; do echo hi >/dev/udp/$QB_SERVER_ADDR/9; done; exit 5`)
	rec, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ExitCode != 5 || rec.Backend != "emulator" || rec.Offload != "wire" || len(rec.Applied) != 2 {
		t.Errorf("record %+v: want exit 5 on the emulator, wire-sized", rec)
	}
	if rec.Shaper == nil || len(rec.Shaper.Directions) != 2 {
		t.Fatalf("no emulator counters for both directions: %+v", rec.Shaper)
	}
	for _, d := range rec.Shaper.Directions {
		if d.Imbalance() != 0 {
			t.Errorf("%s: the counters are off by %d", d.Direction, d.Imbalance())
		}
	}
	if up := rec.Shaper.Directions[1]; up.Received < 3 {
		t.Errorf("client->server received %d wire segments, want the client's 3 datagrams", up.Received)
	}
	if e := rec.Egress["client"]; e.All.Packets < 3 {
		t.Errorf("client egress counted %d packets, want the client's 3 datagrams", e.All.Packets)
	}
}

// TestRunContextKillsClient: the end of ctx kills a running client
// command (its whole PID namespace) and Run returns ctx's error with the
// counters read and the client's status, 128 + SIGKILL.
func TestRunContextKillsClient(t *testing.T) {
	shapedlinktest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	rec, err := Run(ctx, testConfig(t, "sh", "-c", "sleep 300; true"))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "client command was killed") {
		t.Errorf("Run: %v, want the context's deadline, saying the client was killed", err)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("Run took %v after its context ended at 2 s", took)
	}
	if rec.ExitCode != 128+int(syscall.SIGKILL) || rec.Shaper == nil {
		t.Errorf("record: exit %d, shaper %v; want %d and the counters", rec.ExitCode, rec.Shaper, 128+int(syscall.SIGKILL))
	}
}

// TestRunContextWhileServerStarts: the end of ctx while Run waits for the
// server command to listen ends the run at once; the client never starts.
func TestRunContextWhileServerStarts(t *testing.T) {
	shapedlinktest.Need(t)
	marker := filepath.Join(t.TempDir(), "client-ran")
	c := testConfig(t, "touch", marker)
	c.Server, c.ServerWait = "sleep 300", 100*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	rec, err := Run(ctx, c)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "while the server command was starting") {
		t.Errorf("Run: %v, want the context's deadline while the server started", err)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("Run took %v after its context ended at 2 s", took)
	}
	if _, err := os.Stat(marker); err == nil || rec.ExitCode != -1 {
		t.Errorf("the client command ran (exit %d) although the context ended first", rec.ExitCode)
	}
}

// TestRunSignalWhileServerStarts: a signal on Config.Signals while Run
// waits for the server command ends the run with Interrupted.
func TestRunSignalWhileServerStarts(t *testing.T) {
	shapedlinktest.Need(t)
	c := testConfig(t, "true")
	c.Server, c.ServerWait = "sleep 300", 100*time.Second
	sigs := make(chan os.Signal, 1)
	c.Signals = sigs
	time.AfterFunc(time.Second, func() { sigs <- syscall.SIGHUP })
	_, err := Run(context.Background(), c)
	var intr Interrupted
	if !errors.As(err, &intr) || intr.Signal != syscall.SIGHUP {
		t.Errorf("Run: %v, want Interrupted by SIGHUP", err)
	}
}
