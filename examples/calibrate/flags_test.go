package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/calibrate"
)

// flagsWith is the command line with its defaults and the link flags
// args.
func flagsWith(t *testing.T, args ...string) config {
	t.Helper()
	c := config{cfg: calibrate.DefaultConfig()}
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.link = linkFlags(fs, c.cfg)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return c
}

// TestCheckFlags: -offload, -gsoloss, -quicgso and the sender's pace and
// time are read into the config, and each value they (or the bounds on
// the probes and flows) cannot mean is refused with an error naming the
// flag and what to write instead.
func TestCheckFlags(t *testing.T) {
	ok := flagsWith(t, "-offload", "keep")
	ok.gsoLoss, ok.quicGSO = "5:2000:0.1", " 5:1000,loss=ge:1/10 "
	if err := checkFlags(&ok); err != nil {
		t.Fatalf("a good config was refused: %v", err)
	}
	if k := ok.cfg; k.Link.Offload != shapedlink.OffloadKeep || k.GSOLoss == nil || k.GSOLoss.String() != "5:2000:0.1" || k.QUICGSO == nil || k.QUICGSO.String() != "5:1000,loss=ge:1/10" {
		t.Errorf("read %q, %v, %v; want keep, 5:2000:0.1 and 5:1000,loss=ge:1/10", k.Link.Offload, k.GSOLoss, k.QUICGSO)
	}
	none := flagsWith(t)
	if err := checkFlags(&none); err != nil || none.cfg.Link.Offload != shapedlink.OffloadWire || none.cfg.Link.Seed != 1 || none.cfg.GSOLoss != nil || none.cfg.QUICGSO != nil {
		t.Errorf("defaults: %v, mode %q, seed %d, gsoloss %+v, quicgso %+v; want wire, seed 1 and nothing more to measure", err, none.cfg.Link.Offload, none.cfg.Link.Seed, none.cfg.GSOLoss, none.cfg.QUICGSO)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-offload", "fast"}, []string{`-offload "fast"`, "wire", "keep"}},
		{[]string{"-offload", ""}, []string{`-offload ""`, "wire", "keep"}},
		// Checked as every command checks it (calibrate did not).
		{[]string{"-backend", "tc"}, []string{`-backend "tc": want netem, emulator or empty`}},
	} {
		c := flagsWith(t, tc.args...)
		err := checkFlags(&c)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %v does not say %q", tc.args, err, w)
			}
		}
	}
	for _, tc := range []struct {
		edit func(*config)
		want []string
	}{
		{func(c *config) { c.gsoLoss = "fast" }, []string{"-gsoloss: "}},
		{func(c *config) { c.gsoLoss = "5:0:1" }, []string{"-gsoloss: "}},
		{func(c *config) { c.gsoLoss = "5:100,dup=1" }, []string{`-gsoloss "5:100,dup=1"`, "down direction has dup", "fixed link"}},
		{func(c *config) { c.gsoLoss = "5:100,down.corrupt=1,down.reorder=5" }, []string{"down direction has corrupt, reorder"}},
		{func(c *config) { c.gsoLoss = "5:100,up.schedule=blackout:300ms/4s" }, []string{"up direction has schedule"}},
		{func(c *config) { c.quicGSO = "5:100,down.trace=const:10" }, []string{`-quicgso "5:100,down.trace=const:10"`, "down direction has trace"}},
		{func(c *config) { c.quicGSO = "5:1000:1:2" }, []string{"-quicgso: "}},
		{func(c *config) { c.cfg.GSOPacePct = 0 }, []string{"-gsoloss-pace 0", "percentage"}},
		{func(c *config) { c.cfg.GSOPacePct = 150 }, []string{"-gsoloss-pace 150"}},
		{func(c *config) { c.cfg.GSOTime = 100 * time.Millisecond }, []string{"-gsoloss-time 100ms"}},
		{func(c *config) { c.cfg.Echoes = 0 }, []string{"-echoes and -losspkts must be positive"}},
		{func(c *config) { c.cfg.JitterProbes = -1 }, []string{"-jitter-probes not negative"}},
		{func(c *config) { c.cfg.Bulk = 299 * time.Millisecond }, []string{"-bulk at least 300ms"}},
		{func(c *config) { c.cfg.Interval = 2 * time.Second }, []string{"-interval between 1ms and 1s"}},
	} {
		c := flagsWith(t)
		tc.edit(&c)
		err := checkFlags(&c)
		if err == nil {
			t.Errorf("%+v was taken", c.cfg)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	}
}

// TestMakePlanProfiles: -profiles is linkflag's, each profile once; an
// empty list leaves the other series, and with none of them there is
// nothing to measure.
func TestMakePlanProfiles(t *testing.T) {
	c := flagsWith(t, "-profiles", "80:10 20:5,jitter=2")
	if err := makePlan(&c); err != nil || len(c.cfg.Profiles) != 2 || c.cfg.Profiles[1].String() != "20:5,jitter=2" {
		t.Errorf("two profiles: %v, %v", c.cfg.Profiles, err)
	}
	c = flagsWith(t, "-profiles", "80:10 80:10.0")
	if err := makePlan(&c); err == nil || !strings.Contains(err.Error(), "-profiles: profile 80:10 is given twice") {
		t.Errorf("a profile given twice: %v", err)
	}
	c = flagsWith(t, "-profiles", " ")
	c.sweep = "200"
	if err := makePlan(&c); err != nil || len(c.cfg.Profiles) != 0 || len(c.cfg.SweepRates) == 0 {
		t.Errorf("-profiles \" \": %v, %v, sweep %v; want the sweep alone", c.cfg.Profiles, err, c.cfg.SweepRates)
	}
	c = flagsWith(t, "-profiles", "")
	if err := makePlan(&c); err == nil || !strings.Contains(err.Error(), "nothing to measure") {
		t.Errorf("nothing given: %v", err)
	}
}
