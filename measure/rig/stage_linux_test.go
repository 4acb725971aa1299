package rig

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// testRoles is the test binary's own server role: it says it listens,
// then exits after ExitAfter with an error, or runs until it is stopped.
var testRoles = RoleEnv{Role: "QUICBENCH_RIGTEST_ROLE", Spec: "QUICBENCH_RIGTEST_SPEC"}

type testSpec struct {
	RoleBase
	ExitAfter time.Duration `json:"exit_after"`
}

type testResult struct {
	Err string `json:"error,omitempty"`
}

func TestMain(m *testing.M) {
	ServeRole(testRoles, map[string]func(context.Context, testSpec, *slog.Logger) (testResult, error){
		RoleServer: func(ctx context.Context, spec testSpec, _ *slog.Logger) (testResult, error) {
			SignalReady("listening")
			if spec.ExitAfter == 0 {
				<-ctx.Done()
				return testResult{}, nil
			}
			time.Sleep(spec.ExitAfter)
			return testResult{}, errors.New("the server gave up")
		},
	}, func(_ string, res *testResult, err error, _ *slog.Logger) {
		if err != nil {
			res.Err = err.Error()
		}
	})
	os.Exit(m.Run())
}

// TestLocalServerUntilStopped: ServerExit delivers the exit of a server
// that ends by itself, and EndServer with no linger says it ended; a
// server that runs until stopped is stopped at once, its result written.
func TestLocalServerUntilStopped(t *testing.T) {
	shapedlinktest.Need(t)
	p, err := shapedlink.ParseProfile("10:100")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, exitAfter := range []time.Duration{300 * time.Millisecond, 0} {
		dir := t.TempDir()
		var run results.Run
		var logged bytes.Buffer
		l := Local{Env: testRoles, Link: shapedlink.Options{Backend: shapedlink.BackendEmulator}, Log: slog.New(slog.NewTextHandler(&logged, nil))}
		st, err := l.Open(ctx, dir, p, &run)
		if err != nil {
			t.Fatal(err)
		}
		if ServerExit(st) != nil {
			t.Error("ServerExit delivers before the server started")
		}
		_, err = st.StartServer(ctx, transport.Options{}, time.Minute, func(b RoleBase) any { return testSpec{RoleBase: b, ExitAfter: exitAfter} })
		if err != nil {
			st.Close(&run)
			t.Fatal(err)
		}
		exit := ServerExit(st)
		if exitAfter > 0 {
			select {
			case err := <-exit:
				if err == nil || !strings.Contains(err.Error(), "exit status 1") {
					t.Errorf("the server's exit delivered as %v, want exit status 1", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("the server's exit never delivered")
			}
		}
		start := time.Now()
		ended, err := st.EndServer(ctx, 0)
		took := time.Since(start)
		st.Close(&run)
		if err != nil || ended != (exitAfter > 0) || took > 3*time.Second {
			t.Errorf("server exiting after %v: EndServer said ended %v (%v) after %v; want %v at once", exitAfter, ended, err, took, exitAfter > 0)
		}
		if _, err := ReadResult[testResult](filepath.Join(dir, RoleServer+".json")); err != nil {
			t.Errorf("server exiting after %v left no result: %v", exitAfter, err)
		}
		if strings.Contains(logged.String(), "still running") {
			t.Errorf("a server stopped with no linger was warned of:\n%s", logged.String())
		}
	}
	if ServerExit(nil) != nil {
		t.Error("ServerExit delivers for a stage not Local's")
	}
}

// TestLocalRecordsCrossTraffic: a run on a link with cross traffic has
// every flow's account in its record, the QUIC one included.
func TestLocalRecordsCrossTraffic(t *testing.T) {
	shapedlinktest.Need(t)
	p, err := shapedlink.ParseProfile("10:20,down.cross=1xreno+1xquic")
	if err != nil {
		t.Fatal(err)
	}
	var run results.Run
	st, err := Local{Env: testRoles, Link: shapedlink.Options{Backend: shapedlink.BackendEmulator}}.Open(context.Background(), t.TempDir(), p, &run)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	st.Close(&run)
	if len(run.Link.Cross) != 2 {
		t.Fatalf("the record holds %d cross flows, want 2: %+v", len(run.Link.Cross), run.Link.Cross)
	}
	for _, c := range run.Link.Cross {
		if c.Bytes == 0 || c.SentPackets == 0 || c.Err != "" {
			t.Errorf("cross flow %d (%s): %d bytes, %d packets, err %q", c.Index, c.Kind, c.Bytes, c.SentPackets, c.Err)
		}
	}
}
