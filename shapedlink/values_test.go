package shapedlink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSpec writes a schedule or trace file into a test's directory.
func writeSpec(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRefused checks that in is refused with a *ProfileError blaming
// field (when not "") and saying says.
func wantRefused(t *testing.T, in, field, says string) {
	t.Helper()
	_, err := ParseProfile(in)
	var pe *ProfileError
	switch {
	case err == nil:
		t.Errorf("ParseProfile(%q) accepted it; want it refused, saying %q", in, says)
	case !errors.As(err, &pe):
		t.Errorf("ParseProfile(%q) returned a %T, want *ProfileError", in, err)
	case field != "" && pe.Field != field:
		t.Errorf("ParseProfile(%q) blamed %q, want %q (%v)", in, pe.Field, field, err)
	case !strings.Contains(err.Error(), says):
		t.Errorf("ParseProfile(%q) = %q, want it to say %q", in, err, says)
	}
}

// TestProfileValuesAsApplied: a value the backends would not apply as
// written is refused, with the nearest ones that they would: a rate that
// is not a whole number of bytes per second (netem's unit; 0.0000001
// Mbit/s was 0 bytes/s, no rate limit at all), a time that is not a whole
// number of microseconds (rtt_ms's half included), and a non-zero
// percentage below MinPct (netem's resolution would change it, or make it
// zero).
func TestProfileValuesAsApplied(t *testing.T) {
	for _, c := range []struct{ in, field, says string }{
		{"80:0.0000001", "rate_mbit", "is 0.0125 bytes per second"},
		{"80:0.0000001", "rate_mbit", "use 0.000008"},
		{"80:1.234567", "rate_mbit", "use 1.23456 or 1.234568"},
		{"80:10.0000000000001", "rate_mbit", "whole bytes per second"},
		{"80:10,up.rate=0.0000001", "", "whole bytes per second"},
		{"80.001:10", "rtt_ms", "40.0005 ms, not a whole number of microseconds"},
		{"0.001:10", "rtt_ms", "even number of microseconds"},
		{"0.0005:10", "rtt_ms", "not a whole number of microseconds"},
		{"80:10,down.delay=40.0005", "", "not a whole number of microseconds"},
		{"80:10,jitter=0.0001", "", "not a whole number of microseconds"},
		{"80:10,qdisc=codel,target=0.0015", "", "whole number of microseconds"},
		{"80:10,qdisc=codel,interval=99.9999", "", "whole number of microseconds"},
		{"80:10:0.000000001", "loss_pct", "MinPct"},
		{"80:10,loss=1/0.0000001", "", "MinPct"},
		{"80:10,dup=0.000000001", "", "MinPct"},
		{"80:10,reorder=0.000001", "", "MinPct"},
		{"80:10,jitter=5/normal/0.000001", "", "MinPct"},
		{"80:10,loss=ge:0.0000001/10", "", "MinPct"},
		{"80:10,schedule=step:10/2.0000001/5s/20s", "", "use 2 or 2.000008"},
	} {
		wantRefused(t, c.in, c.field, c.says)
	}
	for _, c := range []struct{ change, says string }{
		{`{"at": "1s", "set": "delay", "value": 40.0005}`, "not a whole number of microseconds"},
		{`{"at": "1s", "set": "loss", "value": 0.000000001}`, "MinPct"},
		{`{"at": "1s", "set": "rate", "value": 0.0000001}`, "whole bytes per second"},
	} {
		p := writeSpec(t, "s.json", `{"changes": [`+c.change+`]}`)
		if _, err := LoadSchedule(p); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("LoadSchedule(%s) = %v, want it refused, saying %q", c.change, err, c.says)
		}
	}

	// The smallest and the finest values that are applied as written.
	for in, str := range map[string]string{
		"80:0.000008":               "80:0.000008",
		"80:1.234568":               "80:1.234568",
		"80.002:10":                 "80.002:10",
		"0.002:10":                  "0.002:10",
		"80:10,down.delay=40.001":   "80:10,down.delay=40.001",
		"80:10,jitter=0.001":        "80:10,jitter=0.001",
		"80:10:0.00001":             "80:10:0.00001",
		"80:10,loss=ge:0.00001/100": "80:10,loss=ge:0.00001/100",
		"80:10,qdisc=codel,target=0.001,interval=99.999": "80:10,qdisc=codel,target=0.001,interval=99.999",
	} {
		p, err := ParseProfile(in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", in, err)
			continue
		}
		if p.String() != str {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", in, p.String(), str)
		}
	}

	// A profile built in code is held to the same rules by Validate
	// (which New calls).
	if _, err := NewProfile(80*time.Millisecond, 0.0000001, 0); err == nil || !strings.Contains(err.Error(), "rate_mbit") {
		t.Errorf("NewProfile with 0.0000001 Mbit/s: %v, want a rate_mbit error", err)
	}
	if _, err := NewProfile(80*time.Millisecond+time.Microsecond, 10, 0); err == nil || !strings.Contains(err.Error(), "rtt_ms") {
		t.Errorf("NewProfile with 80.001 ms: %v, want an rtt_ms error", err)
	}
	if _, err := NewProfile(80*time.Millisecond, 10, 1e-9); err == nil || !strings.Contains(err.Error(), "MinPct") {
		t.Errorf("NewProfile with 1e-9%% loss: %v, want a MinPct error", err)
	}
	// An option set in code is read as ParseProfile reads it.
	p, _ := ParseProfile("80:10")
	if err := p.Up.Set("jitter", "0.0015"); err == nil || !strings.Contains(err.Error(), "microseconds") {
		t.Errorf("setting a 1.5 us jitter: %v, want an error about microseconds", err)
	}
}

// TestProfileOverlaps: options of which one would be ignored, or which
// describe an impossible link, are refused with the reason; their
// neighbours that are not contradictions are accepted.
func TestProfileOverlaps(t *testing.T) {
	upOnly := writeSpec(t, "up.json", `{"changes": [{"at": "1s", "dir": "up", "set": "rate", "value": 2}]}`)
	lossy := writeSpec(t, "loss.json", `{"changes": [{"at": "1s", "set": "loss", "value": 5}, {"at": "2s", "set": "loss", "value": 0}]}`)
	for _, c := range []struct{ in, field, says string }{
		// The Gilbert-Elliott model's mean loss, as loss_pct's, is under 100%.
		{"80:10,loss=ge:100/0", "down.loss", "loses 100% of packets"},
		{"80:10,up.loss=ge:50/0", "up.loss", "loses 100% of packets"},
		{"80:10,loss=ge:0/10/100/100", "down.loss", "loses 100% of packets"},
		// A trace replaces the rate in its direction.
		{"80:10,trace=const:5,rate=3", "down.rate", "the down direction's rate is its trace"},
		{"80:10,rate=3,up.trace=const:5", "up.rate", "the up direction's rate is its trace"},
		{"80:10,down.trace=const:5,down.schedule=step:10/2/5s/20s", "down.schedule", "which the direction's trace (const:5) replaces"},
		// A schedule's loss where the Gilbert-Elliott model is the loss.
		{"80:10,loss=ge:1/30,schedule=" + lossy, "down.schedule", "Gilbert-Elliott model"},
		// A schedule with nothing for a direction it is given to.
		{"80:10,schedule=" + upOnly, "down.schedule", "no change for this direction"},
		// Correlations, distributions and gaps of nothing.
		{"80:10,jitter=0/normal", "down.jitter", "shape nothing"},
		{"80:10,up.jitter=0/uniform/25", "up.jitter", "shape nothing"},
		{"80:10,loss=0/25", "down.loss", "correlates nothing"},
		{"80:10:1,up.loss=0/25", "up.loss", "correlates nothing"},
		{"80:10,loss=0/25,schedule=blackout:300ms/10s", "down.loss", "sets no loss"},
		{"80:10,dup=0/5", "down.dup", "correlates nothing"},
		{"80:10,reorder=0/10", "down.reorder", "apply to no packet"},
		{"80:10,down.reorder=0/0/5", "down.reorder", "apply to no packet"},
	} {
		wantRefused(t, c.in, c.field, c.says)
	}
	for _, in := range []string{
		"80:10,down.trace=const:5,up.rate=3",
		"80:10,trace=const:5",
		"80:10,loss=ge:1/0/50",
		"80:10,loss=ge:0/10/100/50",
		"80:10,jitter=0",
		"80:10,loss=0,dup=0,reorder=0",
		"80:10,loss=0/25,schedule=" + lossy,
		"80:10,up.schedule=" + upOnly,
		"80:10,down.trace=const:5,down.schedule=blackout:300ms/10s",
		"80:10,loss=ge:1/30,schedule=blackout:300ms/10s",
		"80:10@50,qdisc=codel",
	} {
		p, err := ParseProfile(in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", in, err)
			continue
		}
		if q, err := ParseProfile(p.String()); err != nil || q != p {
			t.Errorf("%q does not round-trip: %q, %v", in, p.String(), err)
		}
	}
	// New reads the files again and checks them the same way.
	p, err := ParseProfile("80:10,up.schedule=" + upOnly)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Down.Set("schedule", upOnly); err != nil {
		t.Fatal(err)
	}
	if _, err := p.load(); err == nil || !strings.Contains(err.Error(), "down.schedule") || !strings.Contains(err.Error(), "no change for this direction") {
		t.Errorf("loading a schedule that has nothing for down: %v", err)
	}
}

// TestProfileUnits: every field in milliseconds may end in "ms" and every
// percentage in "%", as the package doc says; String's form has neither.
func TestProfileUnits(t *testing.T) {
	for in, str := range map[string]string{
		"80:10,loss=ge:1%/30%":                         "80:10,loss=ge:1/30",
		"80:10,loss=ge:1%/30%/90%/0.1%":                "80:10,loss=ge:1/30/90/0.1",
		"80:10,jitter=5ms/normal":                      "80:10,jitter=5/normal",
		"80:10,jitter=5ms/normal/25%":                  "80:10,jitter=5/normal/25",
		"80ms:10:1%":                                   "80:10:1",
		"80:10,down.delay=60ms,up.delay=20":            "80:10,down.delay=60,up.delay=20",
		"80:10,loss=1%/25%,dup=1%,reorder=2%/10%/5":    "80:10,loss=1/25,dup=1,reorder=2/10/5",
		"80:10,qdisc=codel,target=2.5ms,interval=50ms": "80:10,qdisc=codel,target=2.5,interval=50",
	} {
		p, err := ParseProfile(in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", in, err)
			continue
		}
		if p.String() != str {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", in, p.String(), str)
		}
		if q, err := ParseProfile(str); err != nil || q != p {
			t.Errorf("%q and %q differ: %+v, %v", in, str, q, err)
		}
	}
	for _, c := range []struct{ in, field, says string }{
		{"80:10,jitter=5us", "", `"5us" is not a decimal number`},
		{"80:10,loss=1ms", "", "not a decimal number"},
		{"80:10%", "rate_mbit", "not a decimal number"},
		{"80:10,rate=5%", "", "not a decimal number"},
		{"80ms%:10", "rtt_ms", "not a decimal number"},
		{"80:10,loss=ge:1%%/30", "", "not a decimal number"},
	} {
		wantRefused(t, c.in, c.field, c.says)
	}
}

// TestProfileErrorsShort: an error names the field or option, the value
// and what is wrong, and points at the grammar instead of repeating it.
func TestProfileErrorsShort(t *testing.T) {
	for _, c := range []struct{ in, names, points string }{
		{"80:10,jitter=5/gauss", `option "jitter=5/gauss"`, "see shapedlink.OptionsGrammar"},
		{"80:10,up.rate=0", "up.rate", "see shapedlink.OptionsGrammar"},
		{"80:10,loss=ge:1%%/30", `option "loss=ge:1%%/30"`, "see shapedlink.OptionsGrammar"},
		{"80:ten", `rate_mbit "ten"`, ProfileGrammar},
		{"80:10:100", "loss_pct", ProfileGrammar},
	} {
		_, err := ParseProfile(c.in)
		if err == nil {
			t.Errorf("ParseProfile(%q) accepted it", c.in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.names) || !strings.Contains(msg, c.points) {
			t.Errorf("ParseProfile(%q) = %q, want it to name %q and point at %q", c.in, msg, c.names, c.points)
		}
		if strings.Contains(msg, OptionsGrammar) || len(msg) > len(c.in)+250 {
			t.Errorf("ParseProfile(%q) = %q (%d bytes): repeats the grammar or is too long", c.in, msg, len(msg))
		}
	}
}
