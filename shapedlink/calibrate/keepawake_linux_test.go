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
	opts.EmulatorKeepAwake, opts.EmulatorKeepAwakeAuto = false, true
	if b := bareOptions(opts, shapedlink.OffloadWire); b.EmulatorKeepAwakeAuto {
		t.Errorf("bare options %+v; want no keep-awake auto", b)
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
		if strings.Contains(first, "CPUs kept awake") != on || strings.Contains(string(js), `"keep_awake":true`) != on || strings.Contains(first, "auto") {
			t.Errorf("KeepAwake %v: table's first line %q, JSON %s", on, first, js)
		}
	}
	// With auto, the probe's figures and decision.
	for _, on := range []bool{false, true} {
		rep := Report{WakeProbe: &shapedlink.WakeProbe{Sleeps: 300, SleepUs: 1000, P99Ms: 0.25, MaxMs: 0.5, LimitP99Ms: 0.2, LimitMaxMs: 2, KeepAwake: on}}
		var table bytes.Buffer
		printTable(&table, rep)
		first, _, _ := strings.Cut(table.String(), "\n")
		js, _ := json.Marshal(rep)
		if !strings.Contains(first, "keep-awake auto") || !strings.Contains(first, "p99 0.250") || strings.Contains(first, "CPUs kept awake") != on ||
			!strings.Contains(string(js), `"wake_probe":{"sleeps":300`) {
			t.Errorf("probe deciding %v: table's first line %q, JSON %s", on, first, js)
		}
	}
}
