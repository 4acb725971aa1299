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
	"github.com/shakenfist/quicbench/internal/tracetest"
	"golang.org/x/sys/unix"
)

// TestTraceLateAfterSIGKILL: calibrate -trace-late killed with SIGKILL
// while its trace is armed leaves tracing on; the next run restores it to
// how the first found it (events, tracing_on, no trigger) and exits 0.
func TestTraceLateAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("changes the kernel's tracing state for a while")
	}
	if os.Geteuid() != 0 {
		t.Skip("-trace-late needs root")
	}
	tracetest.Lock(t)
	const tracefs = "/sys/kernel/tracing"
	if _, err := os.Stat(filepath.Join(tracefs, "trace_marker")); err != nil {
		if err := unix.Mount("tracefs", tracefs, "tracefs", 0, ""); err != nil {
			t.Skip("no tracefs here:", err)
		}
		defer unix.Unmount(tracefs, 0)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(tracefs, name))
		return strings.TrimSpace(string(b))
	}
	const event = "events/sched/sched_switch/enable"
	on, enabled := read("tracing_on"), read(event)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"-backend", "emulator", "-trace-late", "1ms", "-profiles", "20:10", "-echoes", "3000", "-bulk", "600ms", "-losspkts", "200", "-sweep", ""}
	cmd := cmdtest.Command(ctx, t, 0, cmdtest.OpenDir(t, 0), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for read(event) != "1" {
		if ctx.Err() != nil {
			_ = cmd.Process.Kill()
			t.Fatal("the first run never armed its trace")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if read(event) != "1" {
		t.Fatal("the killed run left tracing as found; the test has nothing to check")
	}
	r := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append(args[:4], shortRun...)...)
	if r.Code != 0 {
		t.Errorf("the run after the killed one: %v", r)
	}
	if read("tracing_on") != on || read(event) != enabled {
		t.Errorf("after the next run: tracing_on %s, %s %s; before the killed run %s and %s", read("tracing_on"), event, read(event), on, enabled)
	}
	tracetest.NoTrigger(t, read("events/ftrace/print/trigger"))
}
