package spicelive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/results"
)

// A new work directory gets a random order with a seed, recorded and
// reused on resume; one made before the choice keeps its fixed order; an
// explicit order that differs from the directory's is refused.
func TestWorkdirRecordsTheOrder(t *testing.T) {
	c := goodConfig()
	c.Workdir = t.TempDir()
	release, err := claimWorkdir(&c)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if c.Order != OrderRandom || c.OrderSeed == 0 {
		t.Fatalf("a new directory: order %q seed %d, want random with a seed", c.Order, c.OrderSeed)
	}
	had, err := LoadConfig(c.Workdir)
	if err != nil || had.OrderSeed != c.OrderSeed || had.Order != OrderRandom {
		t.Fatalf("recorded %q %d (%v), want random %d", had.Order, had.OrderSeed, err, c.OrderSeed)
	}
	again := goodConfig()
	again.Workdir = c.Workdir
	release, err = claimWorkdir(&again)
	if err != nil {
		t.Fatalf("resuming: %v", err)
	}
	release()
	if again.OrderSeed != c.OrderSeed {
		t.Errorf("resumed with seed %d, want the directory's %d", again.OrderSeed, c.OrderSeed)
	}
	fixed := goodConfig()
	fixed.Workdir, fixed.Order = c.Workdir, orderFixed
	if release, err := claimWorkdir(&fixed); err == nil {
		release()
		t.Error("a fixed order took a directory made with a random one")
	} else if !strings.Contains(err.Error(), "order") {
		t.Errorf("refused without naming the order: %v", err)
	}

	// A directory written before the order was recorded.
	old := goodConfig()
	old.Workdir = t.TempDir()
	if err := results.WriteJSON(filepath.Join(old.Workdir, SettingsFile), old); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(old.Workdir, SettingsFile))
	if strings.Contains(string(b), "order") {
		t.Fatalf("the old settings already name an order: %s", b)
	}
	for _, o := range []string{"", orderFixed} {
		resume := goodConfig()
		resume.Workdir, resume.Order = old.Workdir, o
		release, err := claimWorkdir(&resume)
		if err != nil {
			t.Fatalf("resuming an old directory with order %q: %v", o, err)
		}
		release()
		if resume.Order == OrderRandom {
			t.Errorf("an old directory resumed with order %q runs at random", o)
		}
	}
}
