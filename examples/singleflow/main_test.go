package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/singleflow"
)

func TestMain(m *testing.M) { cmdtest.Main(m, main) }

// Bad input is refused before anything runs, with exit 2 and the reason.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-flows", "udp"}, `flow "udp"`},
		{[]string{"-losses", "x"}, `"x" is not a number`},
		{[]string{"-repeats", "0", "-flows", "quic"}, "repeats 0"},
		{[]string{"-quicreno-beta", "100"}, "beta 100%"},
		{[]string{"-flows", "quic tcp-quicreno2"}, `flow "tcp-quicreno2"`},
		{[]string{"-quicreno-iw", "4294967297"}, `invalid value "4294967297" for flag -quicreno-iw`},
		{[]string{"-quicreno-iw", "4294967296"}, `invalid value "4294967296" for flag -quicreno-iw`},
		{[]string{"-quicreno-beta", "4294967366"}, `invalid value "4294967366" for flag -quicreno-beta`},
		{[]string{"-quicreno-iw", "-1"}, `invalid value "-1" for flag -quicreno-iw`},
	} {
		r := cmdtest.Run(t, 0, dir, append(tc.args, "-workdir", filepath.Join(dir, "w"))...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
}

// Without root the quicreno flow is refused up front, saying why.
func TestControllerNeedsRoot(t *testing.T) {
	cmdtest.NeedUnprivileged(t)
	dir := cmdtest.OpenDir(t, cmdtest.Nobody)
	r := cmdtest.Run(t, cmdtest.Nobody, dir, "-flows", "tcp-quicreno", "-workdir", filepath.Join(dir, "w"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "needs root") {
		t.Errorf("exit %d, stderr %q; want 2 and a reason naming root", r.Code, r.Stderr)
	}
}

// readRecord reads results.json in dir.
func readRecord(t *testing.T, dir string) singleflow.Record {
	t.Helper()
	var r singleflow.Record
	if err := results.ReadJSON(filepath.Join(dir, "results.json"), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecordsEachRunAndResumes: each run is in results.json as it ends; an
// interrupt records no run as failed; the same command resumes the work
// directory, running only what is missing; other settings are refused.
func TestRecordsEachRunAndResumes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for the links")
	}
	dir := t.TempDir()
	w := filepath.Join(dir, "w")
	args := []string{"-flows", "quic", "-repeats", "3", "-profiles", "20:20", "-losses", "0", "-duration", "3s", "-warmup", "1s", "-workdir", w}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := cmdtest.Command(ctx, t, 0, dir, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), "[1/3]") {
			// The first run is recorded before the second ends.
			if r := readRecord(t, w); len(r.Results) != 1 || r.Results[0].Error != "" {
				t.Errorf("after the first run, results.json holds %+v", r.Results)
			}
			cmd.Process.Signal(os.Interrupt)
		}
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("interrupted: %v, want exit 130; stderr:\n%s", err, strings.Join(seen, "\n"))
	}
	r := readRecord(t, w)
	if len(r.Results) != 1 || r.Results[0].Error != "" {
		t.Fatalf("after the interrupt, results.json holds %+v; want the one run measured, no failure", r.Results)
	}
	res := cmdtest.Run(t, 0, dir, args...)
	if res.Code != 0 || !strings.Contains(res.Stderr, "resuming "+w+": 1 runs measured, 2 to run") {
		t.Errorf("resume: exit %d, stderr %q", res.Code, res.Stderr)
	}
	if r := readRecord(t, w); len(r.Results) != 3 {
		t.Errorf("after the resume, %d runs; want 3", len(r.Results))
	}
	res = cmdtest.Run(t, 0, dir, append(args, "-repeats", "4")...)
	if res.Code != 2 || !strings.Contains(res.Stderr, "other settings") {
		t.Errorf("other settings: exit %d, stderr %q; want 2", res.Code, res.Stderr)
	}
	if r := readRecord(t, w); len(r.Results) != 3 {
		t.Errorf("the refused command changed results.json: %d runs", len(r.Results))
	}
}
