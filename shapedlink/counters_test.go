package shapedlink

import (
	"encoding/json"
	"testing"
)

// TestEgressCountersJSON: egress counters are written with snake_case
// keys, as every other field of a record, and a record written before the
// keys had tags (Go's field names) still reads back the same.
func TestEgressCountersJSON(t *testing.T) {
	ec := EgressCounters{All: Counter{Packets: 10, Bytes: 15140}, Oversize: Counter{Packets: 1, Bytes: 2900}}
	b, err := json.Marshal(ec)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]map[string]uint64
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if keys["all"]["packets"] != 10 || keys["all"]["bytes"] != 15140 || keys["oversize"]["packets"] != 1 || keys["oversize"]["bytes"] != 2900 || len(keys) != 2 {
		t.Errorf("EgressCounters as JSON: %s; want the keys all and oversize, each with packets and bytes", b)
	}
	var back EgressCounters
	if err := json.Unmarshal(b, &back); err != nil || back != ec {
		t.Errorf("%s read back as %+v (%v), want %+v", b, back, err, ec)
	}
	old := `{"All":{"Packets":10,"Bytes":15140},"Oversize":{"Packets":1,"Bytes":2900}}`
	var fromOld EgressCounters
	if err := json.Unmarshal([]byte(old), &fromOld); err != nil || fromOld != ec {
		t.Errorf("an old record's %s read as %+v (%v), want %+v", old, fromOld, err, ec)
	}
}
