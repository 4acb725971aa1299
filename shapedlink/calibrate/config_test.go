package calibrate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// TestDefaultConfig: the defaults are calibrate's: the eight profiles,
// each valid and as the grammar reads them, the sweep rates and the
// discipline profile, and Validate takes them.
func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	var got []string
	for _, p := range c.Profiles {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		q, err := shapedlink.ParseProfile(p.String())
		if err != nil || q.String() != p.String() || q.Limit != p.Limit {
			t.Errorf("%s reads back as %v, %v", p, q, err)
		}
		got = append(got, p.String())
	}
	if want := "80:10 80:10:1 150:2 150:2:1 20:100 20:100:1 5:1000 5:1000:1"; strings.Join(got, " ") != want {
		t.Errorf("profiles %q, want %q", strings.Join(got, " "), want)
	}
	if c.QdiscProfile.String() != "80:10" || c.QdiscProfile.Validate() != nil || len(c.SweepRates) != 4 || c.SweepRates[3] != 2000 {
		t.Errorf("qdisc profile %s, sweep %v", c.QdiscProfile, c.SweepRates)
	}
	if c.Link.Seed != 1 || c.Link.Offload != shapedlink.OffloadWire || c.Echoes != 200 || c.Interval != 10*time.Millisecond || !c.Bare || c.Bulk != 9*time.Second ||
		c.LossPackets != 4000 || c.JitterProbes != 400 || c.TimeVarying != 12*time.Second || c.GSOPacePct != 60 || c.GSOTime != 8*time.Second {
		t.Errorf("defaults %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

// TestValidate: each field Run cannot use is refused with an error naming
// it, before anything is built.
func TestValidate(t *testing.T) {
	fixed, err := shapedlink.ParseProfile("5:2000:0.1")
	if err != nil {
		t.Fatal(err)
	}
	dup, err := shapedlink.ParseProfile("5:100,dup=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Echoes = 0 }, "Echoes 0"},
		{func(c *Config) { c.LossPackets = -1 }, "LossPackets -1"},
		{func(c *Config) { c.JitterProbes = -1 }, "JitterProbes -1"},
		{func(c *Config) { c.Bulk = time.Millisecond }, "Bulk 1ms"},
		{func(c *Config) { c.Interval = 0 }, "Interval 0s"},
		{func(c *Config) { c.Profiles, c.SweepRates = nil, nil }, "nothing to measure"},
		{func(c *Config) { c.SweepRates = []float64{0} }, "rate 0"},
		{func(c *Config) { c.IperfRates = []float64{200000} }, "rate 200000"},
		{func(c *Config) { c.Qdiscs = []string{"fifo", "sfq"} }, `Qdiscs names "sfq"`},
		{func(c *Config) { c.QUICGSO = &dup }, `QUICGSO "5:100,dup=1": its down direction has dup`},
		{func(c *Config) { c.GSOLoss, c.GSOPacePct = &fixed, 0 }, "GSOPacePct 0"},
		{func(c *Config) { c.GSOLoss, c.GSOTime = &fixed, time.Hour }, "GSOTime 1h0m0s"},
		{func(c *Config) { c.KeepAwake, c.Link.Backend = true, shapedlink.BackendNetem },
			`KeepAwake (-keep-awake) keeps the CPUs awake for the emulator, and Link.Backend is "netem": set it to "emulator" or leave it empty, or turn KeepAwake off`},
		{func(c *Config) { c.DepartureWindow, c.Link.Backend = time.Millisecond, shapedlink.BackendNone }, `Link.Backend is "none"`},
		{func(c *Config) { c.KeepAwake, c.KeepAwakeAuto = true, true }, "KeepAwake and KeepAwakeAuto are both set"},
		{func(c *Config) { c.KeepAwakeAuto, c.Link.Backend = true, shapedlink.BackendNone }, `KeepAwakeAuto (-keep-awake auto) decides keep-awake for the emulator, and Link.Backend is "none"`},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v; want one saying %q", err, tc.want)
		}
	}
	c := DefaultConfig()
	c.GSOPacePct = 0 // no flood: its pace is not read
	if err := c.Validate(); err != nil {
		t.Errorf("a pace without a flood was refused: %v", err)
	}
	for _, b := range []shapedlink.Backend{shapedlink.BackendEmulator, shapedlink.BackendAuto} {
		c = DefaultConfig()
		c.KeepAwake, c.DepartureWindow, c.Link.Backend = true, time.Millisecond, b
		if err := c.Validate(); err != nil {
			t.Errorf("KeepAwake and DepartureWindow with backend %q were refused: %v", b, err)
		}
	}
}

// failingWriter takes n bytes, then fails.
type failingWriter struct{ n int }

func (f *failingWriter) Write(b []byte) (int, error) {
	if len(b) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(b)
	return len(b), nil
}

// TestWriteTableError: WriteTable says when its writer failed.
func TestWriteTableError(t *testing.T) {
	if err := WriteTable(&failingWriter{n: 10}, goldenReport()); err == nil || err.Error() != "disk full" {
		t.Errorf("WriteTable to a failing writer: %v, want disk full", err)
	}
	if err := WriteTable(&failingWriter{n: 1 << 20}, goldenReport()); err != nil {
		t.Errorf("WriteTable: %v", err)
	}
}
