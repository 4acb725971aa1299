package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/measure/calibrate"
)

// TestKeepAwakeRun: by default the CPUs are kept awake beside the
// emulator (its priority line names them) and the departure window is
// 200 us, and the report records both; -keep-awake=false and
// -departure-window 0 turn them off; with -backend netem -keep-awake is
// refused as a command line, naming both flags.
func TestKeepAwakeRun(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-json"}, shortRun...)...)
	cmdtest.SkipIfNoUserNS(t, c)
	rep, r := oneProfile(t, c)
	if !rep.KeepAwake || rep.DepartureWindowUs != 200 || r.Error != "" || !strings.Contains(r.Priority, "kept awake") || r.Bare == nil || r.Bare.Error != "" {
		t.Errorf("report keep_awake %v window %d us, profile error %q, emulator priority %q, bare pair %+v; want both on by default and recorded, the link's CPUs kept awake and the bare pair measured",
			rep.KeepAwake, rep.DepartureWindowUs, r.Error, r.Priority, r.Bare)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-json", "-keep-awake=false", "-departure-window", "0"}, shortRun...)...)
	rep, r = oneProfile(t, c)
	if rep.KeepAwake || rep.DepartureWindowUs != 0 || r.Error != "" || strings.Contains(r.Priority, "kept awake") {
		t.Errorf("turned off: report keep_awake %v window %d us, profile error %q, emulator priority %q; want both off", rep.KeepAwake, rep.DepartureWindowUs, r.Error, r.Priority)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-backend", "netem", "-keep-awake"}, shortRun...)...)
	if c.Code != 2 || !strings.Contains(c.Stderr, "-keep-awake") || !strings.Contains(c.Stderr, "-backend emulator") || c.Stdout != "" {
		t.Errorf("-keep-awake with -backend netem: exit %d, stdout %q, stderr %q; want exit 2 naming both", c.Code, c.Stdout, c.Stderr)
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
