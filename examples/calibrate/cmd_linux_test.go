package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
)

// TestFlagRefusals: calibrate refuses an offload mode, a -gsoloss or a
// -quicgso it cannot read with exit status 2 and a line naming the flag,
// before building anything.
func TestFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-offload", "fast"}, `-offload "fast"`},
		{[]string{"-gsoloss", "2000"}, `-gsoloss: `},
		{[]string{"-gsoloss", "5:100,dup=1"}, `-gsoloss "5:100,dup=1": its down direction has dup`},
		{[]string{"-quicgso", "x:1"}, `-quicgso: `},
		{[]string{"-gsoloss", "5:100:1", "-gsoloss-pace", "0"}, "-gsoloss-pace 0"},
	} {
		c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append(tc.args, "-profiles", "", "-sweep", "")...)
		if c.Code != 2 || !strings.Contains(c.Stderr, "calibrate: "+tc.want) || c.Stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and a line saying %q", tc.args, c.Code, c.Stdout, c.Stderr, tc.want)
		}
	}
}

// fixtures holds the reports shapedlink/calibrate's table tests render.
var fixtures = filepath.Join("..", "..", "shapedlink", "calibrate", "testdata")

// TestRenderOldReport: -render prints a report saved before the offload
// mode was recorded as shapedlink/calibrate's TestOldReportRenders pins it, exits 0, and says on
// stderr what failed in it.
func TestRenderOldReport(t *testing.T) {
	path, err := filepath.Abs(filepath.Join(fixtures, "old-wire-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(fixtures, "old-wire-report.table.golden"))
	if err != nil {
		t.Fatal(err)
	}
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-render", path)
	if c.Code != 0 || c.Stdout != string(want) {
		t.Errorf("exit %d; stdout:\n%s\nwant:\n%s", c.Code, c.Stdout, want)
	}
	if !strings.Contains(c.Stderr, "the report records") || !strings.Contains(c.Stderr, "iperf3 5:100") {
		t.Errorf("stderr does not say what failed in the report: %q", c.Stderr)
	}
}

// TestRenderRefusesNonReports: -render refuses what cannot be a report
// without reading it (it read /dev/zero until memory ran out, and waited
// forever on a named pipe with no writer): exit 1 at once, naming the
// path and what it is.
func TestRenderRefusesNonReports(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxReportBytes+1); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "is a character device, not a regular file"},
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "is 67108865 bytes, over the 64 MiB"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := cmdtest.Command(ctx, t, 0, cmdtest.OpenDir(t, 0), "-render", tc.path)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("-render %s was still running after 10 s", tc.path)
			continue
		}
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "calibrate: -render: results: "+tc.path+" "+tc.want) || stdout.Len() > 0 {
			t.Errorf("-render %s: %v, stdout %q, stderr %q; want exit 1 and %q", tc.path, err, stdout.String(), stderr.String(), tc.want)
		}
	}
}
