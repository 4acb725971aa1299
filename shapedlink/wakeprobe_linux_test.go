package shapedlink

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestProbeWake: the probe sleeps its count, and its figures are in
// order, not negative, and far below a second; the decision is the rule's;
// it is taken once per process.
func TestProbeWake(t *testing.T) {
	p, err := ProbeWake()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ProbeWake(); err != nil || again != p {
		t.Errorf("a second ProbeWake: %+v, %v; want the first probe again", again, err)
	}
	ordered := 0 <= p.P50Ms && p.P50Ms <= p.P99Ms && p.P99Ms <= p.MaxMs && p.MaxMs < 1000
	if p.Sleeps != wakeSleeps || p.SleepUs != 1000 || !ordered || p.TookMs < 300 || p.Scheduling == "" ||
		p.KeepAwake != keepAwakeFor(time.Duration(p.P99Ms*1e6), time.Duration(p.MaxMs*1e6)) {
		t.Errorf("probe %+v", p)
	}
	t.Logf("probe: %+v", p)
}

// TestKeepAwakeAutoRefused: auto is refused beside EmulatorKeepAwake and
// on a backend without the emulator, before anything is built.
func TestKeepAwakeAutoRefused(t *testing.T) {
	p, _ := ParseProfile("20:10")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Backend: BackendEmulator, EmulatorKeepAwake: true, EmulatorKeepAwakeAuto: true}, "both set"},
		{Options{Backend: BackendNetem, EmulatorKeepAwakeAuto: true}, "EmulatorKeepAwakeAuto"},
		{Options{Backend: BackendInProcess, EmulatorKeepAwakeAuto: true}, "EmulatorKeepAwakeAuto"},
	} {
		if l, err := New(context.Background(), p, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			if l != nil {
				l.Close()
			}
			t.Errorf("%+v: %v; want it refused, saying %q", c.opts, err, c.want)
		}
	}
}

// TestEmulatorWakeProbe: an emulated link with auto records the probe
// in its host state, and keeps CPUs awake exactly when the probe said so.
func TestEmulatorWakeProbe(t *testing.T) {
	needNamespaces(t)
	p, _ := ParseProfile("20:10")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{Backend: BackendEmulator, EmulatorKeepAwakeAuto: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hs, err := l.Instruments().HostState()
	if err != nil {
		t.Fatal(err)
	}
	pr := hs.EmulatorWakeProbe
	if pr == nil || pr.Sleeps != wakeSleeps {
		t.Fatalf("host state's probe %+v; want the probe recorded", pr)
	}
	if awake := len(hs.EmulatorKeepAwakeCPUs) > 0; awake != pr.KeepAwake {
		t.Errorf("CPUs kept awake %v, probe decided %v (%+v)", hs.EmulatorKeepAwakeCPUs, pr.KeepAwake, pr)
	}
}
