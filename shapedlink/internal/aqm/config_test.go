package aqm

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestKind(t *testing.T) {
	for _, k := range []Kind{FIFO, CoDel, FQCoDel} {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Fatalf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if k, err := ParseKind(" FQ-CoDel "); err != nil || k != FQCoDel {
		t.Fatalf("ParseKind(FQ-CoDel) = %v, %v", k, err)
	}
	if _, err := ParseKind("red"); err == nil || !strings.Contains(err.Error(), "fq_codel") {
		t.Fatalf("ParseKind(red): %v", err)
	}
	if s := Kind(9).String(); s != "Kind(9)" {
		t.Fatal(s)
	}
	if overlimit.String() != "overlimit" || CoDelDrop.String() != "codel" {
		t.Fatal("Cause names")
	}
}

func TestConfigJSON(t *testing.T) {
	c := Config{Kind: FQCoDel, ECN: true, Target: 2 * time.Millisecond}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Kind":"fq_codel"`) {
		t.Fatalf("JSON %s", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || back != c {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"Kind":"pie"}`), &back); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

func TestConfigDefaultsAndValidate(t *testing.T) {
	d := Config{Kind: FQCoDel}.WithDefaults()
	want := Config{Kind: FQCoDel, Limit: 10240, Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond,
		Flows: 1024, Quantum: 1514, MemoryLimit: 32 << 20, DropBatch: 64}
	if d != want {
		t.Fatalf("defaults %+v, want %+v", d, want)
	}
	if l := (Config{Kind: CoDel}).WithDefaults().Limit; l != 1000 {
		t.Fatalf("codel limit %d", l)
	}
	if l := (Config{}).WithDefaults().Limit; l != 1000 {
		t.Fatalf("fifo limit %d", l)
	}
	if got := d.Describe(); got != "fq_codel limit 10240 flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 33554432 drop_batch 64" {
		t.Fatalf("Describe: %q", got)
	}
	if got := (Config{Kind: CoDel, ECN: true}).Describe(); got != "codel limit 1000 target 5ms interval 100ms ecn" {
		t.Fatalf("Describe: %q", got)
	}

	bad := []struct {
		c     Config
		field string
	}{
		{Config{Kind: 3}, "Kind"},
		{Config{Limit: -1}, "Limit"},
		{Config{Limit: MaxLimit + 1}, "Limit"},
		{Config{Kind: CoDel, Target: -time.Millisecond}, "Target"},
		{Config{Kind: CoDel, Target: time.Nanosecond}, "Target"},
		{Config{Kind: CoDel, Interval: 2 * time.Hour}, "Interval"},
		{Config{Kind: FQCoDel, Flows: maxFlows + 1}, "Flows"},
		{Config{Kind: FQCoDel, Quantum: 100}, "Quantum"},
		{Config{Kind: FQCoDel, MemoryLimit: -5}, "MemoryLimit"},
		{Config{Kind: FQCoDel, DropBatch: -1}, "DropBatch"},
	}
	for _, b := range bad {
		err := b.c.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), "Config."+b.field) || !strings.Contains(err.Error(), "must be") {
			t.Errorf("%+v: error %v, want one naming Config.%s and its range", b.c, err, b.field)
		}
		if _, err := New(b.c, nil); err == nil {
			t.Errorf("New(%+v) accepted it", b.c)
		}
	}
	// Fields that do not apply to the kind are not checked.
	if err := (Config{Kind: FIFO, Quantum: 1, Target: -1}).WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
}
