package linkspec

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestCheck: what a direction may not hold, by the key it names and a
// word of its reason; and a sound one passes.
func TestCheck(t *testing.T) {
	base := Direction{Delay: time.Millisecond, RateMbit: 1, Limit: 10}
	if k, r := base.CheckLoaded(); r != "" {
		t.Fatalf("a sound direction: %s %s", k, r)
	}
	for name, c := range map[string]struct {
		mod       func(*Direction)
		key, want string
	}{
		"negative delay":   {func(d *Direction) { d.Delay = -1 }, "delay", "between"},
		"delay in ns":      {func(d *Direction) { d.Delay = time.Millisecond + 1 }, "delay", "microseconds"},
		"no rate":          {func(d *Direction) { d.RateMbit = 0 }, "rate", "positive"},
		"fractional bytes": {func(d *Direction) { d.RateMbit = 0.0000001 }, "rate", "bytes per second"},
		"loss 100":         {func(d *Direction) { d.LossPct = 100 }, "loss", "0 <= loss < 100"},
		"loss NaN":         {func(d *Direction) { d.LossPct = math.NaN() }, "loss", "0 <= loss"},
		"GE p negative":    {func(d *Direction) { d.GE, d.HasGE = GE{P: -1, R: 10, OneMinusH: 100}, true }, "loss", "negative"},
		"GE r over 100":    {func(d *Direction) { d.GE, d.HasGE = GE{P: 1, R: 101, OneMinusH: 100}, true }, "loss", "more than 100"},
		"GE always lost":   {func(d *Direction) { d.GE, d.HasGE = GE{P: 100, R: 0, OneMinusH: 100}, true }, "loss", "mean loss"},
		"two loss models":  {func(d *Direction) { d.GE, d.HasGE, d.LossPct = GE{P: 1, R: 10, OneMinusH: 100}, true, 1 }, "loss", "one loss model"},
		"zero limit":       {func(d *Direction) { d.Limit = 0 }, "limit", "between 1"},
		"huge limit":       {func(d *Direction) { d.Limit = MaxLimit + 1 }, "limit", "between 1"},
		"huge held":        {func(d *Direction) { d.Limit, d.Queue.Kind = MaxLimit, CoDel }, "limit", "held at once"},
		"jitter too wide":  {func(d *Direction) { d.Jitter = (MaxJitterMs + 1) * time.Millisecond }, "jitter", "between 0"},
		"no such table":    {func(d *Direction) { d.Jitter, d.JitterDist = time.Millisecond, "cauchy" }, "jitter", "distribution"},
		"dup over 100":     {func(d *Direction) { d.DupPct = 101 }, "dup", "more than 100"},
		"flows for codel":  {func(d *Direction) { d.Queue = Queue{Kind: CoDel, Flows: 8} }, "qdisc", "fq_codel's"},
		"ecn without one":  {func(d *Direction) { d.Queue.ECN = true }, "qdisc", "need qdisc"},
		"queue and dup":    {func(d *Direction) { d.Queue.Kind, d.DupPct = CoDel, 1 }, "qdisc", "dup or reorder"},
		"reorder no delay": {func(d *Direction) { d.Delay, d.ReorderPct = 0, 5 }, "reorder", "needs a delay"},
		"trace, no period": {func(d *Direction) { d.Trace, d.TraceMs = "t", []uint32{0} }, "trace", "lasts no time"},
		"trace backwards":  {func(d *Direction) { d.Trace, d.TraceMs = "t", []uint32{5, 3, 9} }, "trace", "back in time"},
		"schedule empty":   {func(d *Direction) { d.Schedule = "s.json" }, "schedule", "no change"},
		"out of order": {func(d *Direction) {
			d.Schedule, d.Changes = "s", []Change{{At: 2, Set: "up"}, {At: 1, Set: "down"}}
		}, "schedule", "time order"},
		"past the period": {func(d *Direction) {
			d.Schedule, d.SchedulePeriod, d.Changes = "s", 5, []Change{{At: 5, Set: "up"}}
		}, "schedule", "period"},
		"unknown change":   {func(d *Direction) { d.Schedule, d.Changes = "s", []Change{{Set: "colour"}} }, "schedule", "sets nothing known"},
		"fractional limit": {func(d *Direction) { d.Schedule, d.Changes = "s", []Change{{Set: "limit", Value: 2.5}} }, "schedule", "whole number"},
		"rate of a trace": {func(d *Direction) {
			d.Trace, d.TraceMs, d.Schedule, d.Changes = "t", []uint32{4}, "s", []Change{{Set: "rate", Value: 1}}
		}, "schedule", "trace"},
		"loss of GE": {func(d *Direction) {
			d.GE, d.HasGE, d.Schedule, d.Changes = GE{P: 1, R: 10, OneMinusH: 100}, true, "s", []Change{{Set: "loss", Value: 1}}
		}, "schedule", "Gilbert-Elliott"},
		"scheduled rate in bits": {func(d *Direction) { d.Schedule, d.Changes = "s", []Change{{Set: "rate", Value: 2.0000005}} }, "schedule", "bytes per second"},
	} {
		d := base
		c.mod(&d)
		k, r := d.CheckLoaded()
		if k != c.key || !strings.Contains(r, c.want) {
			t.Errorf("%s: %q %q, want %q and a reason saying %q", name, k, r, c.key, c.want)
		}
	}
	d := base
	d.Schedule, d.Changes = "s", []Change{{At: time.Second, Set: "down", Hold: true}, {At: 2 * time.Second, Set: "up"}, {At: 3 * time.Second, Set: "limit", Value: 50},
		{At: 4 * time.Second, Set: "rate", Value: 0.000008}, {At: 5 * time.Second, Set: "rate", Value: 2.000008}}
	if k, r := d.CheckLoaded(); r != "" {
		t.Errorf("a sound schedule: %s %s", k, r)
	}
	if d.MaxHeld() != 50 {
		t.Errorf("MaxHeld = %d, want 50", d.MaxHeld())
	}
}
