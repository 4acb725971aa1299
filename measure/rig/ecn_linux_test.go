package rig

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// TestRigPinsECN: a run's link that marks (ecn=on) gets kernel TCP asking
// for ECN in both namespaces, and the host record says so; a link that
// does not mark keeps the kernel's default, recorded too.
func TestRigPinsECN(t *testing.T) {
	shapedlinktest.Need(t)
	for profile, want := range map[string]string{"20:10,qdisc=codel,ecn=on": "1", "20:10,qdisc=codel": "2", "20:10,down.qdisc=fq_codel,down.ecn=on": "1"} {
		p, err := shapedlink.ParseProfile(profile)
		if err != nil {
			t.Fatal(err)
		}
		r, err := newRig(context.Background(), RoleEnv{}, t.TempDir(), p, shapedlink.Options{Backend: shapedlink.BackendEmulator})
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		var l results.Link
		b, err := r.HostRecord(&l)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		var hs shapedlink.HostState
		if err := json.Unmarshal(b, &hs); err != nil {
			t.Fatal(err)
		}
		if hs.TCPECN != want {
			t.Errorf("%s: tcp_ecn recorded as %q, want %q", profile, hs.TCPECN, want)
		}
	}
}
