package calibrate

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/internal/tracetest"
)

// A trace as tracefs prints it: the forwarding thread 4242 is woken on
// CPU 1 at 100.000100, a kworker runs a workqueue item there until the
// switch to 4242 at 100.002100, which then writes the late marker.
const caughtTrace = `# tracer: nop
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          <idle>-0       [001] d.h2. 100.000100: sched_wakeup: comm=quicbench-shap pid=4242 prio=98 target_cpu=001
          <idle>-0       [000] d.h2. 100.000150: sched_wakeup: comm=other pid=77 prio=120 target_cpu=000
     kworker/1:2-90      [001] ..... 100.000200: workqueue_execute_start: work struct 0000 function cleanup_net
     kworker/1:2-90      [001] ..s1. 100.001000: softirq_entry: vec=3 [action=NET_RX]
     kworker/1:2-90      [001] ..s1. 100.001100: softirq_exit: vec=3 [action=NET_RX]
     kworker/1:2-90      [001] ..... 100.002000: workqueue_execute_end: work struct 0000 function cleanup_net
     kworker/1:2-90      [001] d..2. 100.002100: sched_switch: prev_comm=kworker/1:2 prev_pid=90 prev_prio=120 prev_state=I ==> next_comm=quicbench-shap next_pid=4242 next_prio=98
  quicbench-shap-4242    [001] ..... 100.002300: tracing_mark_write: quicbench-late tid=4242 late_ns=2150000
`

// TestReadTrace: the reading names the late thread, its wake-up, the
// 2 ms it was runnable and what ran on its CPU meanwhile (not CPU 0's
// events).
func TestReadTrace(t *testing.T) {
	got := readTrace(caughtTrace)
	for _, want := range []string{
		"thread 4242 wrote a frame 2.150 ms late",
		"woken at 100.000100 s by <idle>-0 on CPU 1",
		"ran at 100.002100 s: runnable 2.000 ms",
		"kworker/1:2-90 workqueue_execute_start x1",
		"kworker/1:2-90 softirq_entry x1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("reading lacks %q:\n%s", want, got)
		}
	}
	if _, meanwhile, _ := strings.Cut(got, "meanwhile:"); strings.Contains(meanwhile, "<idle>-0") {
		t.Errorf("reading includes CPU 0's wake-up of another task:\n%s", got)
	}
	if got := readTrace("# tracer: nop\n"); got != "no late marker in the trace" {
		t.Errorf("a trace without the marker reads %q", got)
	}
}

// TestTracerLeavesTracingAsFound: a session that arms the trace and is
// closed leaves every event's enable, tracing_on and the trigger as a
// fresh session then finds them: as before the first.
func TestTracerLeavesTracingAsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("changes the kernel's tracing state for a moment")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	tracetest.Lock(t)
	t1, err := openTracer()
	if err != nil {
		t.Fatal(err)
	}
	before, on := maps.Clone(t1.enabled), t1.on
	if err := t1.arm(); err != nil {
		t1.close()
		t.Fatal(err)
	}
	if err := t1.close(); err != nil {
		t.Fatal(err)
	}
	t2, err := openTracer()
	if err != nil {
		t.Fatal(err)
	}
	defer t2.close()
	asBefore(t, t2, before, on)
}

// asBefore fails t unless tr, a session just opened, finds the events and
// tracing_on as before and on say, and no trigger.
func asBefore(t *testing.T, tr *tracer, before map[string]string, on string) {
	t.Helper()
	if !maps.Equal(tr.enabled, before) || tr.on != on {
		t.Errorf("events %v, tracing_on %s; before %v, %s", tr.enabled, tr.on, before, on)
	}
	trig, err := tr.read("events/ftrace/print/trigger")
	if err != nil {
		t.Fatal(err)
	}
	tracetest.NoTrigger(t, trig)
}

// TestTracerRestoresAKilledSession: while a session is open a second is
// refused; a session whose process died armed (its state file naming a
// process that has ended, as after SIGKILL) is undone by the next open:
// events, tracing_on and the trigger as before the first.
func TestTracerRestoresAKilledSession(t *testing.T) {
	if testing.Short() {
		t.Skip("changes the kernel's tracing state for a moment")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	tracetest.Lock(t)
	old := traceStateFile
	traceStateFile = filepath.Join(t.TempDir(), "trace-late.json")
	t.Cleanup(func() { traceStateFile = old })
	t1, err := openTracer()
	if err != nil {
		t.Fatal(err)
	}
	// Last of all, t1's close unmounts tracefs if t1 mounted it.
	defer t1.close()
	before, on := maps.Clone(t1.enabled), t1.on
	if t2, err := openTracer(); err == nil || !strings.Contains(err.Error(), "holds the kernel's tracing") {
		if t2 != nil {
			t2.close()
		}
		t.Fatalf("a second session while the first runs: %v, want a refusal", err)
	}
	if err := t1.arm(); err != nil {
		t.Fatal(err)
	}
	// The first session's process "dies": its state file names a process
	// that has ended, and it never closes.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(traceStateFile)
	var st traceState
	_ = json.Unmarshal(b, &st)
	st.PID = dead.Process.Pid
	b, _ = json.Marshal(st)
	if err := os.WriteFile(traceStateFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t2, err := openTracer()
	if err != nil {
		t.Fatal(err)
	}
	defer t2.close()
	asBefore(t, t2, before, on)
}
