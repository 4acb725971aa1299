package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCellAxes: a cell's own axes name its directory and title after
// everything else, read back in order, survive a write and a scan, and
// leave a cell without them as it was, byte for byte.
func TestCellAxes(t *testing.T) {
	base := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno", Sessions: 2}
	b, _ := json.Marshal(base)
	if strings.Contains(string(b), "axes") {
		t.Errorf("a cell without axes records them: %s", b)
	}
	c := base.WithAxis("mtu", "1200").WithAxis("tls", "1.3")
	if c.Axes != "mtu=1200 tls=1.3" {
		t.Errorf("Axes %q", c.Axes)
	}
	if got := c.Dir(); got != "80ms-10mbit_loss1_reno_s2_mtu-1200_tls-1.3" {
		t.Errorf("Dir %q", got)
	}
	if got := c.Title(); got != "80 ms / 10 Mbit, mtu 1200, tls 1.3" {
		t.Errorf("Title %q", got)
	}
	if v, ok := c.axis("tls"); !ok || v != "1.3" {
		t.Errorf("Axis(tls) = %q, %v", v, ok)
	}
	if _, ok := c.axis("mss"); ok {
		t.Error("Axis(mss) found")
	}
	if got := c.axisValues(); !slices.Equal(got, []axisPair{{"mtu", "1200"}, {"tls", "1.3"}}) {
		t.Errorf("axisValues %v", got)
	}
	if err := c.validate(); err != nil {
		t.Error(err)
	}
	if got := (Cell{Profile: PathProfile, CC: "reno"}).WithAxis("mtu", "9000").Title(); got != "path between two hosts, as found, mtu 9000" {
		t.Errorf("a two-host cell's title %q", got)
	}

	dir := t.TempDir()
	r := validRun(c, "tcp", 1)
	if err := WriteJSON(filepath.Join(RunDir(dir, c, "tcp", 1), RunFile), r); err != nil {
		t.Fatal(err)
	}
	l, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 1 || l.Runs[0].Cell != c || len(l.Ignored) != 0 {
		t.Errorf("scanned %+v, ignored %v", l.Runs, l.Ignored)
	}
	if _, err := os.Stat(filepath.Join(dir, "80ms-10mbit_loss1_reno_s2_mtu-1200_tls-1.3", "tcp", "r1", RunFile)); err != nil {
		t.Error(err)
	}
}

// TestCellAxesRefused: a cell's axes must be name=value pairs of names and
// values that name a directory apart, each axis once.
func TestCellAxesRefused(t *testing.T) {
	base := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, CC: "reno"}
	for _, axes := range []string{"mtu", "mtu=", "=1", "Mtu=1", "mtu=1_2", "mtu=a/b", "mtu=1  tls=2", "mtu=1 mtu=2", " mtu=1", "1mtu=1"} {
		c := base
		c.Axes = axes
		if err := c.validate(); err == nil {
			t.Errorf("axes %q validated", axes)
		}
	}
	for _, c := range []struct{ name, value string }{{"mtu", "../x"}, {"mtu", ""}, {"a-b", "1"}, {"mtu", strings.Repeat("1", 65)}} {
		if err := CheckAxis(c.name, c.value); err == nil {
			t.Errorf("CheckAxis(%q, %q) passed", c.name, c.value)
		}
	}
}

// TestCompareAxes: numbers with the same unit by number, else as text;
// fewer axes first.
func TestCompareAxes(t *testing.T) {
	c := func(axes string) Cell { return Cell{Axes: axes} }
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"gap=5ms", "gap=20ms", -1},
		{"gap=20ms", "gap=5ms", 1},
		{"cap=0.5", "cap=2", -1},
		{"mode=b", "mode=a", 1},
		{"gap=5ms", "gap=5s", -1},
		{"gap=5ms tls=2", "gap=5ms tls=10", -1},
		{"gap=5ms", "gap=5ms", 0},
		{"", "gap=1", -1},
	} {
		if got := CompareAxes(c(tc.a), c(tc.b)); got != tc.want {
			t.Errorf("CompareAxes(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if !Less(c("gap=5ms"), c("gap=20ms")) || Less(c("gap=20ms"), c("gap=5ms")) {
		t.Error("Less does not order cells by their own axes")
	}
}

// axis is the value c records for the axis name, and whether it records
// one.
func (c Cell) axis(name string) (string, bool) {
	for _, v := range c.axisValues() {
		if v.Axis == name {
			return v.Value, true
		}
	}
	return "", false
}
