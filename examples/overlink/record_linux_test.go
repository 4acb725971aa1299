package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// TestRecordPathRefusedFirst: a -record that cannot be written is refused
// with status 2 before the link is built or any command runs (overlink
// used to run the whole command and then exit 1).
func TestRecordPathRefusedFirst(t *testing.T) {
	root := cmdtest.OpenDir(t, 0) // 0755 root's: not writable by nobody
	file := filepath.Join(root, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, record string
		uid          int
	}{
		{"a directory", root, 0},
		{"below a file", filepath.Join(file, "rec.json"), 0},
		{"in a directory the user cannot write", filepath.Join(root, "rec.json"), cmdtest.Nobody},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.uid != 0 && os.Geteuid() != 0 {
				t.Skip("needs root to run overlink as another user")
			}
			dir := cmdtest.OpenDir(t, c.uid)
			marker := filepath.Join(dir, "client-ran")
			r := cmdtest.Run(t, c.uid, dir, "-profile", "20:10", "-record", c.record, "--", "touch", marker)
			if r.Code != 2 || !strings.Contains(r.Stderr, "-record "+c.record) {
				t.Errorf("%v\nwant status 2 and a message naming -record %s", r, c.record)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the client command ran although the record could not be written")
			}
		})
	}
}

// TestRecordFailureKeepsStatus: a record that cannot be written at the end
// (the client replaced its directory with a file) is reported on stderr,
// and the status is still the client's.
func TestRecordFailureKeepsStatus(t *testing.T) {
	shapedlinktest.Need(t)
	dir := cmdtest.OpenDir(t, 0)
	recDir := filepath.Join(dir, "records")
	r := cmdtest.Run(t, 0, dir, "-profile", "20:10", "-record", filepath.Join(recDir, "rec.json"),
		"--", "sh", "-c", `rm -rf "$1" && touch "$1"`, "sh", recDir)
	if r.Code != 0 || !strings.Contains(r.Stderr, "record was not written") {
		t.Errorf("%v\nwant the client's status 0 and the record's failure on stderr", r)
	}
}

// TestNoRecordByDefault: without -record nothing is written into the
// current directory; a one-line summary on stderr names -record.
func TestNoRecordByDefault(t *testing.T) {
	shapedlinktest.Need(t)
	dir := cmdtest.OpenDir(t, 0)
	r := cmdtest.Run(t, 0, dir, "-profile", "20:10", "--", "true")
	if r.Code != 0 || !strings.Contains(r.Stderr, "-record FILE") {
		t.Errorf("%v\nwant status 0 and a summary naming -record", r)
	}
	var files []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "cmd.test" { // the test binary copied there, if it was
			files = append(files, e.Name())
		}
	}
	if len(files) > 0 {
		t.Errorf("overlink wrote %v into its current directory without -record", files)
	}
}

// TestRecordBalances: a real record accounts for every wire segment the
// emulator received, per direction: received + duplicates = forwarded +
// drops by cause + held. The client sends a burst far larger than a slow
// direction's limit, with loss, and exits at once, so that the emulator
// still holds frames when the record is made (the record used to leave
// the held count out, and such runs came out short).
func TestRecordBalances(t *testing.T) {
	shapedlinktest.Need(t)
	dir := cmdtest.OpenDir(t, 0)
	recPath := filepath.Join(dir, "rec.json")
	// Up: 1042-byte frames at 0.1 Mbit/s, one every 83 ms, ten held at
	// most; the burst leaves the client in far less than that.
	r := runSelf(t, func(self string) []string {
		return []string{"-profile", "20:100,up.rate=0.1,up.limit=10,up.loss=10", "-backend", "emulator", "-seed", "7", "-record", recPath,
			"--", self, helperArg, "send", "198.18.0.1:9", "60", "1000"}
	})
	if r.Code != 0 {
		t.Fatalf("%v", r)
	}
	raw, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Shaper struct {
			Directions []map[string]any `json:"directions"`
		} `json:"shaper"`
	}
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	for _, d := range keys.Shaper.Directions {
		if _, ok := d["held"]; !ok {
			t.Errorf("direction %v of the record has no held count", d["direction"])
		}
	}
	rec := readRecord(t, recPath)
	if rec.Shaper == nil || len(rec.Shaper.Directions) != 2 {
		t.Fatalf("the record has no emulator counters for both directions: %+v", rec.Shaper)
	}
	if rec.Shaper.Unsettled {
		t.Fatalf("the counters were still moving when the record was made: %+v", rec.Shaper)
	}
	for _, d := range rec.Shaper.Directions {
		in := d.Received + d.Duplicates
		out := d.Forwarded + d.LossDrops + d.LimitDrops + d.QueueDrops + d.CoDelDrops + d.BlackoutDrops + d.SendErrors + d.OversizeDrops + d.Held
		t.Logf("%s: received %d duplicates %d forwarded %d loss %d limit %d held %d", d.Direction, d.Received, d.Duplicates, d.Forwarded, d.LossDrops, d.LimitDrops, d.Held)
		if in != out {
			t.Errorf("%s: received %d + duplicates %d != forwarded %d + loss %d + limit %d + queue %d + codel %d + blackout %d + send errors %d + oversize %d + held %d",
				d.Direction, d.Received, d.Duplicates, d.Forwarded, d.LossDrops, d.LimitDrops, d.QueueDrops, d.CoDelDrops, d.BlackoutDrops, d.SendErrors, d.OversizeDrops, d.Held)
		}
	}
	up := rec.Shaper.Directions[1]
	if up.Received < 60 || up.Held == 0 || up.LimitDrops == 0 || up.LossDrops == 0 {
		t.Errorf("client->server: received %d, held %d, limit drops %d, loss drops %d: want the 60 datagrams, some held, some over the limit, some lost",
			up.Received, up.Held, up.LimitDrops, up.LossDrops)
	}
}

// TestEmulatorDefaults: by default the emulator runs with a 200 us
// departure window and keep-awake auto (kept awake or not as the host's
// probe says), -keep-awake off leaves its CPUs to idle, the record and
// the summary say so, and -keep-awake -departure-window 0 turn both
// around.
func TestEmulatorDefaults(t *testing.T) {
	shapedlinktest.Need(t)
	for _, c := range []struct {
		args    []string
		awake   bool
		either  bool // auto: the probe decides
		window  float64
		summary string
	}{
		{nil, false, true, 0.2, "departure window 0.200 ms"},
		{[]string{"-keep-awake", "off"}, false, false, 0.2, "emulator: CPUs left to idle, departure window 0.200 ms"},
		{[]string{"-keep-awake", "-departure-window", "0"}, true, false, 0, "kept awake, no departure window"},
	} {
		dir := cmdtest.OpenDir(t, 0)
		recPath := filepath.Join(dir, "rec.json")
		args := append(append([]string{"-profile", "20:10", "-backend", "emulator", "-record", recPath}, c.args...), "--", "true")
		r := cmdtest.Run(t, 0, dir, args...)
		if r.Code != 0 {
			t.Fatalf("%v", r)
		}
		rec := readRecord(t, recPath)
		if rec.Shaper == nil || (len(rec.Shaper.KeepAwakeCPUs) > 0) != c.awake && !c.either || rec.Shaper.DepartureWindowMs != c.window {
			t.Errorf("%q: record's shaper %+v; want keep-awake %v and window %v ms", c.args, rec.Shaper, c.awake, c.window)
		}
		// Without -record the summary goes to stderr.
		args = append(append([]string{"-profile", "20:10", "-backend", "emulator"}, c.args...), "--", "true")
		if r = cmdtest.Run(t, 0, dir, args...); r.Code != 0 || !strings.Contains(r.Stderr, c.summary) {
			t.Errorf("%q: summary does not say %q:\n%v", c.args, c.summary, r)
		}
	}
}
