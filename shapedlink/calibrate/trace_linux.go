package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// tracefsDir is where the kernel's tracing interface is mounted.
const tracefsDir = "/sys/kernel/tracing"

// traceEvents are the events recorded while a probe is armed: the
// scheduler's switches and wake-ups, interrupts and soft interrupts, and
// workqueue items.
var traceEvents = []string{
	"sched/sched_switch", "sched/sched_wakeup",
	"irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_entry", "irq/softirq_exit",
	"workqueue/workqueue_execute_start", "workqueue/workqueue_execute_end",
}

// lateTrigger stops tracing at the emulator's late marker.
var lateTrigger = `traceoff if buf ~ "` + shapedlink.LateMarkerPrefix + `*"`

// tracer is a tracing session: tracefs as found (mounted by it or not),
// each event's enable file as found, and tracing_on as found, restored
// by close.
type tracer struct {
	mounted bool
	enabled map[string]string
	on      string
	armed   bool
	saved   bool // traceStateFile is this session's
}

// traceStateFile holds, while a session is open, what its close restores
// and whose it is, so that the next session undoes one killed before its
// close.
var traceStateFile = "/run/quicbench/trace-late.json"

// traceState is what traceStateFile holds.
type traceState struct {
	PID     int               `json:"pid"`
	Start   string            `json:"start"` // the process's start time, from /proc/PID/stat
	On      string            `json:"tracing_on"`
	Enabled map[string]string `json:"enabled"`
}

// openTracer mounts tracefs if it is not mounted, restores what a killed
// session left armed, and records what close restores.
func openTracer() (*tracer, error) {
	t := &tracer{enabled: map[string]string{}}
	if _, err := os.Stat(filepath.Join(tracefsDir, "trace_marker")); err != nil {
		if err := unix.Mount("tracefs", tracefsDir, "tracefs", 0, ""); err != nil {
			return nil, fmt.Errorf("trace: mounting tracefs at %s (needs root): %w", tracefsDir, err)
		}
		t.mounted = true
	}
	if err := t.restoreStale(); err != nil {
		t.close()
		return nil, err
	}
	on, err := t.read("tracing_on")
	if err != nil {
		t.close()
		return nil, err
	}
	t.on = on
	for _, e := range traceEvents {
		v, err := t.read("events/" + e + "/enable")
		if err != nil {
			t.close()
			return nil, err
		}
		t.enabled[e] = v
	}
	if err := t.saveState(); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// restoreStale undoes what the session named in traceStateFile left, if
// its process has ended; it refuses while that process runs.
func (t *tracer) restoreStale() error {
	b, err := os.ReadFile(traceStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var st traceState
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		return fmt.Errorf("trace: reading %s, which a session left: %w (remove it once no calibrate -trace-late runs)", traceStateFile, err)
	}
	if start, err := procStart(st.PID); err == nil && start == st.Start {
		return fmt.Errorf("trace: calibrate (pid %d) holds the kernel's tracing for -trace-late; wait for it to end", st.PID)
	}
	errs := []error{t.write("tracing_on", "0")}
	_ = t.write("events/ftrace/print/trigger", "!"+lateTrigger) // absent already is fine
	for e, v := range st.Enabled {
		errs = append(errs, t.write("events/"+e+"/enable", v))
	}
	errs = append(errs, t.write("trace", ""))
	if st.On != "" {
		errs = append(errs, t.write("tracing_on", st.On))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trace: restoring the tracing that calibrate (pid %d) left armed when it was killed: %w", st.PID, err)
	}
	return os.Remove(traceStateFile)
}

// saveState writes traceStateFile for this process.
func (t *tracer) saveState() error {
	start, err := procStart(os.Getpid())
	if err == nil {
		var b []byte
		b, err = json.Marshal(traceState{PID: os.Getpid(), Start: start, On: t.on, Enabled: t.enabled})
		if err == nil {
			err = os.MkdirAll(filepath.Dir(traceStateFile), 0o755)
		}
		if err == nil {
			err = os.WriteFile(traceStateFile+".tmp", b, 0o600)
		}
		if err == nil {
			err = os.Rename(traceStateFile+".tmp", traceStateFile)
		}
	}
	if err != nil {
		return fmt.Errorf("trace: recording what to restore: %w", err)
	}
	t.saved = true
	return nil
}

// procStart is pid's start time in clock ticks since boot, field 22 of
// /proc/PID/stat, which tells a process from a later one with its pid.
func procStart(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat has %d fields after the name", pid, len(f))
	}
	return f[19], nil
}

func (t *tracer) read(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(tracefsDir, name))
	if err != nil {
		return "", fmt.Errorf("trace: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (t *tracer) write(name, v string) error {
	f, err := os.OpenFile(filepath.Join(tracefsDir, name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	_, err = f.Write([]byte(v))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trace: writing %q to %s: %w", v, name, err)
	}
	return nil
}

// arm clears the buffer, enables the events, sets the trigger on the
// late marker and turns tracing on.
func (t *tracer) arm() error {
	t.armed = true
	if err := t.write("tracing_on", "0"); err != nil {
		return err
	}
	if err := t.write("trace", ""); err != nil {
		return err
	}
	for _, e := range traceEvents {
		if err := t.write("events/"+e+"/enable", "1"); err != nil {
			return err
		}
	}
	if err := t.write("events/ftrace/print/trigger", lateTrigger); err != nil {
		return err
	}
	return t.write("tracing_on", "1")
}

// disarm stops tracing and removes the trigger; caught says whether the
// trigger had fired (tracing was off already).
func (t *tracer) disarm() (caught bool, err error) {
	on, err := t.read("tracing_on")
	if err != nil {
		return false, err
	}
	caught = on == "0"
	err = errors.Join(t.write("tracing_on", "0"), t.write("events/ftrace/print/trigger", "!"+lateTrigger))
	return caught, err
}

// save copies the trace buffer to path.
func (t *tracer) save(path string) error {
	in, err := os.Open(filepath.Join(tracefsDir, "trace"))
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("trace: saving the trace: %w", err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// close leaves tracing as it was found: the trigger gone, the events as
// they were, the buffer cleared, tracing_on as it was, and tracefs
// unmounted if this session mounted it. It is safe after any failure.
func (t *tracer) close() error {
	var errs []error
	if t.armed {
		_ = t.write("tracing_on", "0")
		_ = t.write("events/ftrace/print/trigger", "!"+lateTrigger) // absent already is fine
		for e, v := range t.enabled {
			errs = append(errs, t.write("events/"+e+"/enable", v))
		}
		errs = append(errs, t.write("trace", ""))
		if t.on != "" {
			errs = append(errs, t.write("tracing_on", t.on))
		}
	}
	if t.saved && errors.Join(errs...) == nil {
		errs = append(errs, os.Remove(traceStateFile))
	}
	if t.mounted {
		errs = append(errs, unix.Unmount(tracefsDir, 0))
	}
	return errors.Join(errs...)
}

// traceLine is one line of the trace's text: task name, pid, CPU,
// time (s), event and its fields.
type traceLine struct {
	comm   string
	pid    int
	cpu    int
	at     float64
	event  string
	fields string
}

var traceLineRE = regexp.MustCompile(`^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s?(.*)$`)

func parseTrace(text string) []traceLine {
	var out []traceLine
	for _, s := range strings.Split(text, "\n") {
		m := traceLineRE.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		cpu, _ := strconv.Atoi(m[3])
		at, _ := strconv.ParseFloat(m[4], 64)
		out = append(out, traceLine{comm: strings.TrimSpace(m[1]), pid: pid, cpu: cpu, at: at, event: m[5], fields: m[6]})
	}
	return out
}

var (
	markerTid = regexp.MustCompile(shapedlink.LateMarkerPrefix + ` tid=(\d+) late_ns=(\d+)`)
	nextPid   = regexp.MustCompile(`next_pid=(\d+)`)
	wakePid   = regexp.MustCompile(`pid=(\d+) .*target_cpu=(\d+)`)
)

// readTrace is a short reading of a trace stopped by the late marker:
// the late forwarding thread, when it was last woken, how long it was
// runnable before it ran, and what ran on its CPU meanwhile.
func readTrace(text string) string {
	lines := parseTrace(text)
	mk := -1
	var tid int
	var late int64
	for i := len(lines) - 1; i >= 0; i-- {
		if m := markerTid.FindStringSubmatch(lines[i].fields); m != nil {
			mk = i
			tid, _ = strconv.Atoi(m[1])
			late, _ = strconv.ParseInt(m[2], 10, 64)
			break
		}
	}
	if mk < 0 {
		return "no late marker in the trace"
	}
	cpu := lines[mk].cpu
	read := fmt.Sprintf("thread %d wrote a frame %.3f ms late (marker at %.6f s on CPU %d)", tid, float64(late)/1e6, lines[mk].at, cpu)
	sw := -1
	for i := mk - 1; i >= 0; i-- {
		if l := lines[i]; l.event == "sched_switch" && l.cpu == cpu {
			if m := nextPid.FindStringSubmatch(l.fields); m != nil && m[1] == strconv.Itoa(tid) {
				sw = i
				break
			}
		}
	}
	if sw < 0 {
		return read + "; no switch to it in the trace (it was running throughout)"
	}
	wk := -1
	for i := sw - 1; i >= 0; i-- {
		if l := lines[i]; l.event == "sched_wakeup" {
			if m := wakePid.FindStringSubmatch(l.fields); m != nil && m[1] == strconv.Itoa(tid) {
				wk = i
				break
			}
		}
	}
	if wk < 0 {
		return read + fmt.Sprintf("; switched in at %.6f s, no wake-up of it in the trace before that", lines[sw].at)
	}
	read += fmt.Sprintf("; woken at %.6f s by %s-%d on CPU %d, ran at %.6f s: runnable %.3f ms",
		lines[wk].at, lines[wk].comm, lines[wk].pid, lines[wk].cpu, lines[sw].at, (lines[sw].at-lines[wk].at)*1e3)
	// What ran on its CPU meanwhile: each task's events, in order.
	var seen []string
	count := map[string]int{}
	for i := wk + 1; i < sw; i++ {
		if l := lines[i]; l.cpu == cpu {
			k := fmt.Sprintf("%s-%d %s", l.comm, l.pid, l.event)
			if count[k] == 0 {
				seen = append(seen, k)
			}
			count[k]++
		}
	}
	if len(seen) == 0 {
		return read + fmt.Sprintf("; nothing traced on CPU %d meanwhile", cpu)
	}
	var parts []string
	for _, k := range seen {
		parts = append(parts, fmt.Sprintf("%s x%d", k, count[k]))
		if len(parts) == 12 {
			parts = append(parts, "...")
			break
		}
	}
	return read + fmt.Sprintf("; on CPU %d meanwhile: %s", cpu, strings.Join(parts, ", "))
}

// traceName is the file a profile's caught trace is saved as.
func traceName(dir, profile, condition string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, profile)
	return filepath.Join(dir, fmt.Sprintf("trace-late-%s-%s-%s.txt", safe, condition, time.Now().UTC().Format("150405.000")))
}
