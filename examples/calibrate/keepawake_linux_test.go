package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/measure/calibrate"
)

// TestKeepAwakeRun: -keep-awake with the emulator reaches the link (its
// priority line names the CPUs kept awake) and the report records it;
// without -backend emulator it is refused, naming both flags.
func TestKeepAwakeRun(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-json", "-backend", "emulator", "-keep-awake"}, shortRun...)...)
	cmdtest.SkipIfNoUserNS(t, c)
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("stdout is not a one-profile report (%v):\n%s\nstderr:\n%s", err, c.Stdout, c.Stderr)
	}
	r := rep.Results[0]
	if !rep.KeepAwake || r.Error != "" || !strings.Contains(r.Priority, "kept awake") || r.Bare == nil || r.Bare.Error != "" {
		t.Errorf("report keep_awake %v, profile error %q, emulator priority %q, bare pair %+v; want it recorded, the link's CPUs kept awake and the bare pair measured",
			rep.KeepAwake, r.Error, r.Priority, r.Bare)
	}
	c = cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-keep-awake"}, shortRun...)...)
	if c.Code == 0 || !strings.Contains(c.Stderr, "-keep-awake") || !strings.Contains(c.Stderr, "-backend emulator") || c.Stdout != "" {
		t.Errorf("-keep-awake without -backend emulator: exit %d, stdout %q, stderr %q; want it refused naming both", c.Code, c.Stdout, c.Stderr)
	}
}
