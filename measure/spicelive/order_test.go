package spicelive

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure"
)

// armsOf is each repeat's arms in the order the plan runs them, and their
// positions, for the live reading of c's first profile.
func armsOf(c Config) (orders [][]measure.Arm, positions [][]int) {
	for _, j := range c.Plan() {
		if j.Profile != c.Profiles[0] || j.Reading != c.Readings[0] {
			continue
		}
		for len(orders) < j.Repeat {
			orders, positions = append(orders, nil), append(positions, nil)
		}
		orders[j.Repeat-1] = append(orders[j.Repeat-1], j.Arm)
		positions[j.Repeat-1] = append(positions[j.Repeat-1], j.Position)
	}
	return orders, positions
}

// A random order runs every arm once in each repeat, in orders that
// differ between repeats and that the seed repeats; a fixed order is the
// arms' as listed.
func TestPlanShufflesArmsPerRepeat(t *testing.T) {
	c := goodConfig()
	c.Arms = []measure.Arm{"tcp", "tcp-bbr", "tcp-quicreno", "quic", "quic-per-channel"}
	c.Repeats = 10
	c.Order, c.OrderSeed = OrderRandom, 42
	orders, positions := armsOf(c)
	distinct := map[string]bool{}
	firsts := map[measure.Arm]bool{}
	for r, o := range orders {
		sorted := slices.Clone(o)
		slices.Sort(sorted)
		want := slices.Clone(c.Arms)
		slices.Sort(want)
		if !slices.Equal(sorted, want) {
			t.Fatalf("repeat %d runs %v, want each of %v once", r+1, o, c.Arms)
		}
		if !slices.Equal(positions[r], []int{1, 2, 3, 4, 5}) {
			t.Errorf("repeat %d positions %v, want 1 to 5", r+1, positions[r])
		}
		distinct[fmt.Sprint(o)] = true
		firsts[o[0]] = true
	}
	if len(distinct) < 5 || len(firsts) < 3 {
		t.Errorf("10 repeats gave %d distinct orders and %d distinct first arms: not shuffled per repeat", len(distinct), len(firsts))
	}
	again, _ := armsOf(c)
	if !slices.EqualFunc(orders, again, slices.Equal) {
		t.Error("the same seed gave another plan")
	}
	c.OrderSeed = 43
	if other, _ := armsOf(c); slices.EqualFunc(orders, other, slices.Equal) {
		t.Error("another seed gave the same plan")
	}
	c.Order, c.OrderSeed = orderFixed, 0
	fixed, _ := armsOf(c)
	for r, o := range fixed {
		if !slices.Equal(o, c.Arms) {
			t.Errorf("fixed order, repeat %d: %v, want %v", r+1, o, c.Arms)
		}
	}
}

// An arm carries its settings over the sitting's, and refuses one it
// does not know, or one outside the live reading.
func TestArmsCarrySettings(t *testing.T) {
	base, sets, err := splitArm("tcp-bbr+defer10+bounded")
	if err != nil || base != "tcp-bbr" || len(sets) != 2 {
		t.Fatalf("splitArm = %s %v %v", base, sets, err)
	}
	c := goodConfig()
	c.Readings = []string{ReadingLive}
	c.Arms = []measure.Arm{"tcp-bbr", "tcp-bbr+defer10+bounded"}
	c.ServerOptions = []string{"deferred-fps=5", "streaming-video=off"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r := c.forArm("tcp-bbr+defer10+bounded")
	if !slices.Equal(r.serverOptions, []string{"streaming-video=off", "deferred-fps=10"}) || r.notSentLowat != 16<<10 || r.spiceRcvBuf != 64<<10 {
		t.Errorf("with its settings: %+v", r)
	}
	if r := c.forArm("tcp-bbr"); !slices.Equal(r.serverOptions, c.ServerOptions) || r.notSentLowat != 0 || r.spiceRcvBuf != 0 {
		t.Errorf("without: %+v", r)
	}
	for arm, want := range map[measure.Arm]string{
		"tcp+fast":            `"+fast" is not a setting`,
		"tcp+defer10+defer10": "names +defer10 twice",
		"udp+defer10":         "udp",
	} {
		c.Arms = []measure.Arm{arm}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("arm %s: %v, want %q", arm, err, want)
		}
	}
	c.Arms, c.Readings = []measure.Arm{"tcp+defer10"}, []string{ReadingLive, ReadingSynthetic}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "live reading only") {
		t.Errorf("a settings arm beside the synthetic reading: %v", err)
	}
}
