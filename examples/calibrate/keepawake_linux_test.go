package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/calibrate"
)

// TestKeepAwakeRun: by default the departure window is 200 us and
// keep-awake is auto: the report holds the probe, and the CPUs are kept
// awake beside the emulator (its priority line names them) exactly when
// the probe said so; -keep-awake off leaves them to idle with no probe,
// -keep-awake keeps them awake and -departure-window 0 turns the window
// off; with -backend netem -keep-awake is refused as a command line,
// naming both flags.
func TestKeepAwakeRun(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-json"}, shortRun...)...)
	cmdtest.SkipIfNoUserNS(t, c)
	rep, r := oneProfile(t, c)
	if rep.KeepAwake || rep.WakeProbe == nil || rep.DepartureWindowUs != 200 || r.Error != "" || strings.Contains(r.Priority, "kept awake") != rep.WakeProbe.KeepAwake {
		t.Errorf("default (-keep-awake auto): report keep_awake %v probe %+v window %d us, profile error %q, emulator priority %q; want the window on and recorded, the probe recorded and followed",
			rep.KeepAwake, rep.WakeProbe, rep.DepartureWindowUs, r.Error, r.Priority)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-json", "-keep-awake", "off"}, shortRun...)...)
	rep, r = oneProfile(t, c)
	if rep.KeepAwake || rep.WakeProbe != nil || r.Error != "" || strings.Contains(r.Priority, "kept awake") {
		t.Errorf("-keep-awake off: report keep_awake %v probe %+v, profile error %q, emulator priority %q; want the CPUs left to idle and no probe",
			rep.KeepAwake, rep.WakeProbe, r.Error, r.Priority)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-json", "-keep-awake", "-departure-window", "0"}, shortRun...)...)
	rep, r = oneProfile(t, c)
	if !rep.KeepAwake || rep.WakeProbe != nil || rep.DepartureWindowUs != 0 || r.Error != "" || !strings.Contains(r.Priority, "kept awake") || r.Bare == nil || r.Bare.Error != "" {
		t.Errorf("-keep-awake -departure-window 0: report keep_awake %v window %d us, profile error %q, emulator priority %q, bare pair %+v; want the link's CPUs kept awake, no window, the bare pair measured",
			rep.KeepAwake, rep.DepartureWindowUs, r.Error, r.Priority, r.Bare)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-backend", "netem", "-keep-awake"}, shortRun...)...)
	if c.Code != 2 || !strings.Contains(c.Stderr, "-keep-awake") || !strings.Contains(c.Stderr, "-backend emulator") || c.Stdout != "" {
		t.Errorf("-keep-awake with -backend netem: exit %d, stdout %q, stderr %q; want exit 2 naming both", c.Code, c.Stdout, c.Stderr)
	}
}

// TestWakeProbeMode: -wake-probe prints the probe's figures and decision,
// one line or as JSON, and builds no link.
func TestWakeProbeMode(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-wake-probe")
	if c.Code != 0 || !strings.HasPrefix(c.Stdout, "keep-awake auto: timer wake-ups late by p50 ") || !strings.Contains(c.Stdout, "over 300 sleeps") || strings.Count(c.Stdout, "\n") != 1 {
		t.Errorf("-wake-probe: exit %d, stdout %q, stderr %q; want the probe's line", c.Code, c.Stdout, c.Stderr)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-wake-probe", "-json")
	var p shapedlink.WakeProbe
	if err := json.Unmarshal([]byte(c.Stdout), &p); err != nil || c.Code != 0 || p.Sleeps != 300 || p.LimitP99Ms != 0.2 || p.MaxMs < p.P99Ms {
		t.Errorf("-wake-probe -json: exit %d, %v, probe %+v, stdout %q, stderr %q", c.Code, err, p, c.Stdout, c.Stderr)
	}
}

// oneProfile reads c's standard output as a one-profile report.
func oneProfile(t *testing.T, c cmdtest.Result) (calibrate.Report, calibrate.Result) {
	t.Helper()
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("stdout is not a one-profile report (%v):\n%s\nstderr:\n%s", err, c.Stdout, c.Stderr)
	}
	return rep, rep.Results[0]
}
