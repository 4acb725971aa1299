package measure

import (
	"testing"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// ownTCP is an importer's arm named tcp-something: the tcp arm as it is.
type ownTCP struct{ Arm }

func (ownTCP) Name() string { return "tcp-own" }

func init() {
	if err := Register(ownTCP{TCP}); err != nil {
		panic(err)
	}
}

// PinnedCC reads the controller of tcp-<controller>, and of no other arm,
// a registered arm named tcp-something among them.
func TestPinnedCC(t *testing.T) {
	for name, want := range map[string]string{"tcp-reno": "reno", "tcp-quicreno": "quicreno", "tcp-bbr": "bbr"} {
		if cc, ok := Arm(name).PinnedCC(); !ok || cc != want {
			t.Errorf("PinnedCC(%q) = %q, %v; want %q", name, cc, ok, want)
		}
	}
	for _, name := range []string{"tcp", "tcp-mux", "quic", "tcp-", "tcp-Reno", "tcp-my_cc", "tcp-averyveryverylongname", "tcp-own"} {
		if cc, ok := Arm(name).PinnedCC(); ok {
			t.Errorf("PinnedCC(%q) = %q, true; want no controller", name, cc)
		}
	}
}

// tcp-<controller> is an arm with no registering: it pins its controller
// over the cell's at both ends.
func TestControllerArms(t *testing.T) {
	a, err := Lookup("tcp-cubic")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "tcp-cubic" {
		t.Fatalf("Lookup(tcp-cubic) gave %q", a.Name())
	}
	s, c, err := PrepareOptions(a, spicelike.Defaults(), transport.Options{CongestionControl: "reno"})
	if err != nil {
		t.Fatal(err)
	}
	if s.CongestionControl != "cubic" || c.CongestionControl != "cubic" {
		t.Errorf("prepared %q and %q, want the arm's cubic over the cell's reno at both ends", s.CongestionControl, c.CongestionControl)
	}
	if _, err := Lookup("tcp-"); err == nil {
		t.Error("Lookup accepted tcp- with no controller")
	}
	if a, err := ParseCarrierArm("tcp-quicreno"); err != nil || a != "tcp-quicreno" {
		t.Errorf("ParseCarrierArm(tcp-quicreno) = %q, %v", a, err)
	}
}
