package render

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFlattenJSONKeepsOrderAndNesting(t *testing.T) {
	kv, err := flattenJSON(json.RawMessage(`{"kernel_release":"6.18","cc":["reno","cubic"],"netem":false,` +
		`"offload":[{"namespace":"server","mtu":1500},{"namespace":"client","mtu":1500}],"nested":{"a":1.5,"b":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range kv {
		got = append(got, p[0]+"="+p[1])
	}
	want := "kernel_release=6.18|cc=reno cubic|netem=false|offload=(namespace=server mtu=1500) (namespace=client mtu=1500)|nested.a=1.5|nested.b=(null)"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("flattened\n got %s\nwant %s", g, want)
	}
	if _, err := flattenJSON(json.RawMessage(`{"a":`)); err == nil {
		t.Error("truncated JSON was accepted")
	}
}
