package calibrate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// TestBareOptionsNotKeptAwake: a bare pair's options have no emulator,
// so no CPUs kept awake (shapedlink refuses that for BackendNone), and
// keep the rest of the links' options.
func TestBareOptionsNotKeptAwake(t *testing.T) {
	opts := shapedlink.Options{Backend: shapedlink.BackendEmulator, EmulatorKeepAwake: true, Seed: 7}
	b := bareOptions(opts, shapedlink.OffloadKeep)
	if b.Backend != shapedlink.BackendNone || b.EmulatorKeepAwake || b.Offload != shapedlink.OffloadKeep || b.Seed != 7 {
		t.Errorf("bare options %+v; want backend none, no keep-awake, offload keep, seed 7", b)
	}
	if got := keptAwake([]int{0, 1}); got != "CPUs 0,1 kept awake" {
		t.Errorf("keptAwake: %q", got)
	}
}

// TestKeepAwakeRecorded: a report made with KeepAwake says so in its JSON
// and on the table's first line; one made without says nothing of it.
func TestKeepAwakeRecorded(t *testing.T) {
	for _, on := range []bool{false, true} {
		rep := Report{KeepAwake: on}
		var table bytes.Buffer
		printTable(&table, rep)
		first, _, _ := strings.Cut(table.String(), "\n")
		js, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(first, "CPUs kept awake") != on || strings.Contains(string(js), `"keep_awake":true`) != on {
			t.Errorf("KeepAwake %v: table's first line %q, JSON %s", on, first, js)
		}
	}
}
