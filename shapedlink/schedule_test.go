package shapedlink

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// holds reports whether a change of s holds frames during a blackout.
func holds(s Schedule) bool {
	return slices.ContainsFunc(s.Changes, func(c Change) bool { return c.Hold })
}

func TestLoadScheduleGenerators(t *testing.T) {
	s, err := LoadSchedule("blackout:300ms/10s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{At: 5 * time.Second, Set: "down"}, {At: 5300 * time.Millisecond, Set: "up"}}
	if s.Period != 10*time.Second || len(s.Changes) != 2 || s.Changes[0] != want[0] || s.Changes[1] != want[1] || holds(s) {
		t.Errorf("blackout:300ms/10s = %+v", s)
	}
	if h, _ := LoadSchedule("blackout:300ms/10s/hold"); !holds(h) {
		t.Errorf("blackout with hold does not hold: %+v", h)
	}
	s, err = LoadSchedule("step:10/2/5s/20s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Period != 20*time.Second || s.Changes[0] != (Change{At: 10 * time.Second, Set: "rate", Value: 2}) || s.Changes[1] != (Change{At: 15 * time.Second, Set: "rate", Value: 10}) {
		t.Errorf("step:10/2/5s/20s = %+v", s)
	}
	for spec, says := range map[string]string{
		"blackout:300ms":       "blackout:DUR/EVERY",
		"blackout:6s/10s":      "shorter than half the period",
		"blackout:300/10s":     "not a duration with a unit",
		"blackout:1s/10s/keep": "blackout:DUR/EVERY",
		"step:10/0/1s/4s":      "not a positive Mbit/s",
		"step:10/2/1s":         "step:HI/LO/DUR/EVERY",
		"wobble:3":             "neither a generator",
		"missing.json":         "cannot be read",
	} {
		if _, err := LoadSchedule(spec); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("LoadSchedule(%q) = %v, want an error saying %q", spec, err, says)
		}
	}
}

func TestLoadScheduleFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"period": "20s", "changes": [
		{"at": "15s", "set": "rate", "value": 10},
		{"at": "10s", "set": "rate", "value": 2},
		{"at": "12s", "dir": "up", "set": "down", "hold": true},
		{"at": "12.3s", "dir": "up", "set": "up"}]}`)
	s, err := LoadSchedule(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Changes) != 4 || s.Changes[0].At != 10*time.Second || s.Changes[3].At != 15*time.Second {
		t.Errorf("the changes are not in time order: %+v", s.Changes)
	}
	if d, u := s.ForDir(Down), s.ForDir(Up); len(d.Changes) != 2 || len(u.Changes) != 4 || !holds(u) || holds(d) {
		t.Errorf("ForDir: down %+v, up %+v", d.Changes, u.Changes)
	}
	for text, says := range map[string]string{
		`{"changes": []}`: "no changes",
		`{"period": "5s", "changes": [{"at": "6s", "set": "up"}]}`:        "outside the period",
		`{"changes": [{"at": "1s", "set": "rate"}]}`:                      "needs a rate",
		`{"changes": [{"at": "1s", "set": "loss", "value": 100}]}`:        "use down for a blackout",
		`{"changes": [{"at": "1s", "set": "limit", "value": 1.5}]}`:       "whole number",
		`{"changes": [{"at": "1s", "set": "up", "hold": true}]}`:          "only a down change does",
		`{"changes": [{"at": "1s", "set": "down", "dir": "sideways"}]}`:   "names direction",
		`{"changes": [{"at": "soon", "set": "up"}]}`:                      "want a duration",
		`{"changes": [{"at": "1s", "set": "up", "colour": "red"}]}`:       "not a schedule file",
		`{"changes": [{"at": "1s", "set": "teleport"}]}`:                  "sets nothing known",
		`{"period": "-1s", "changes": [{"at": "1s", "set": "up"}]}`:       "want a duration",
		`{"changes": [{"at": "1s", "set": "delay", "value": 100000000}]}`: "one-way delay",
	} {
		p := write("bad.json", text)
		if _, err := LoadSchedule(p); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want an error saying %q", text, err, says)
		}
	}
	if _, err := LoadSchedule(dir + "/"); err == nil {
		t.Error("a directory was read as a schedule")
	}
}

func TestLoadTrace(t *testing.T) {
	c, err := LoadTrace("const:12")
	if err != nil {
		t.Fatal(err)
	}
	// 12 Mbit/s is one 1500-byte opportunity every millisecond exactly.
	if c.Period() != 10*time.Second || len(c.Ms) != 10000 || c.Ms[0] != 1 || c.Ms[9999] != 10000 || c.MeanMbit() != 12 {
		t.Errorf("const:12: %d opportunities, first %d, period %v, mean %v", len(c.Ms), c.Ms[0], c.Period(), c.MeanMbit())
	}
	cell, err := LoadTrace("cell:10/0.5/3")
	if err != nil {
		t.Fatal(err)
	}
	if cell.Period() != time.Minute || math.Abs(cell.MeanMbit()-10) > 0.01 {
		t.Errorf("cell:10/0.5/3: period %v mean %.4f, want 60s and 10", cell.Period(), cell.MeanMbit())
	}
	// Its variability: the per-second rates have a coefficient of
	// variation near the configured one (the AR(1)'s per-100 ms CV,
	// smoothed a little by the one-second bins).
	var rates []float64
	for s := 0; s < 60; s++ {
		rates = append(rates, float64(cell.Opportunities(time.Duration(s)*time.Second, time.Duration(s+1)*time.Second))*TraceOpportunity*8/1e6)
	}
	var mean, sq float64
	for _, r := range rates {
		mean += r / 60
	}
	for _, r := range rates {
		sq += (r - mean) * (r - mean) / 59
	}
	if cv := math.Sqrt(sq) / mean; cv < 0.25 || cv > 0.75 {
		t.Errorf("cell:10/0.5/3: per-second CV %.2f, want about 0.5", cv)
	}
	if again, _ := LoadTrace("cell:10/0.5/3"); again.Format() != cell.Format() {
		t.Error("the same seed gave a different trace")
	}
	if other, _ := LoadTrace("cell:10/0.5/4"); other.Format() == cell.Format() {
		t.Error("another seed gave the same trace")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "t.trace")
	if err := os.WriteFile(p, []byte(c.Format()), 0o644); err != nil {
		t.Fatal(err)
	}
	if back, err := LoadTrace(p); err != nil || back.Format() != c.Format() {
		t.Errorf("a written trace read back differently: %v", err)
	}
	for text, says := range map[string]string{
		"1\n2\nx\n": "line 3",
		"5\n3\n":    "goes back in time",
		"0\n0\n":    "lasts no time",
		"":          "line 1",
	} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadTrace(p); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("trace %q: %v, want an error saying %q", text, err, says)
		}
	}
	for _, spec := range []string{"const:0", "cell:10", "cell:10/9", "cell:10/0.5/x", "/dev/null/x"} {
		if _, err := LoadTrace(spec); err == nil {
			t.Errorf("LoadTrace(%q) accepted it", spec)
		}
	}
}

// TestProfileScheduleAndTrace: the options round-trip, reach their
// direction, need the emulator, and are refused beside a discipline.
func TestProfileScheduleAndTrace(t *testing.T) {
	p, err := ParseProfile("80:10,down.trace=cell:10/0.5,schedule=blackout:300ms/10s")
	if err != nil {
		t.Fatal(err)
	}
	if d, u := p.Direction(Down), p.Direction(Up); d.Trace != "cell:10/0.5" || u.Trace != "" || d.Schedule != "blackout:300ms/10s" || u.Schedule != d.Schedule {
		t.Errorf("down %+v, up %+v", d, u)
	}
	if back, err := ParseProfile(p.String()); err != nil || back != p {
		t.Errorf("%q round-trips to %q (%v)", p.String(), back.String(), err)
	}
	if why := p.emulatorOnly(); !strings.Contains(why, "trace") {
		t.Errorf("emulatorOnly() = %q", why)
	}
	if s, _ := ParseProfile("80:10,schedule=step:10/2/1s/4s"); s.emulatorOnly() != "" {
		t.Errorf("netem applies a step schedule, but emulatorOnly() = %q", s.emulatorOnly())
	}
	if h, _ := ParseProfile("80:10,up.schedule=blackout:1s/4s/hold"); !strings.Contains(h.emulatorOnly(), "holds") {
		t.Errorf("a holding blackout needs the emulator, but emulatorOnly() = %q", h.emulatorOnly())
	}
	for in, says := range map[string]string{
		"80:10,schedule=blackout:1s":                    "blackout:DUR/EVERY",
		"80:10,trace=cell:1000000/1":                    "mean",
		"80:10,qdisc=fq_codel,schedule=step:10/2/1s/4s": "not combined with a schedule",
	} {
		if _, err := ParseProfile(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseProfile(%q) = %v, want an error saying %q", in, err, says)
		}
	}
}

func TestScheduledChanges(t *testing.T) {
	p, _ := ParseProfile("80:10,down.schedule=step:10/2/5s/20s,up.schedule=blackout:1s/4s")
	start := time.Unix(1000, 0)
	got, err := ScheduledChanges(p, start, start.Add(9*time.Second), start.Add(21*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.At.Sub(start).String()+" "+c.Dir+" "+c.Set)
	}
	want := "10s down rate|10s up down|11s up up|14s up down|15s down rate|15s up up|18s up down|19s up up"
	if strings.Join(lines, "|") != want {
		t.Errorf("changes in [9s, 21s):\n got %s\nwant %s", strings.Join(lines, "|"), want)
	}
}
