package measure_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// shortWorkload is the reference session for two seconds, half a second
// of it warm-up.
func shortWorkload() spicelike.Config {
	cfg := spicelike.Defaults()
	cfg.Duration, cfg.Warmup = 2*time.Second, 500*time.Millisecond
	return cfg
}

// The built-in arms are registered in order, tcp-mux after transport's,
// and found by name; an unknown name says which arms there are.
func TestRegistryBuiltins(t *testing.T) {
	names := measure.ArmNames()
	want := []string{"tcp", "quic", "quic-per-channel", "quic-priority", "tcp-mux"}
	if len(names) < len(want) || !slices.Equal(names[:len(want)], want) {
		t.Fatalf("ArmNames() = %v, want it to start %v", names, want)
	}
	for _, n := range want {
		a, err := measure.Lookup(n)
		if err != nil || a.Name() != n {
			t.Errorf("Lookup(%q) = %v, %v", n, a, err)
		}
	}
	_, err := measure.Lookup("sctp")
	if err == nil || !strings.Contains(err.Error(), `unknown arm "sctp": the arms are tcp, quic`) {
		t.Errorf("Lookup(sctp) = %v, want an unknown arm naming the arms", err)
	}
}

// namedArm is the arm it embeds under another name.
type namedArm struct {
	measure.Arm
	name string
}

func (a namedArm) Name() string { return a.name }

// ptrArm is a Transport whose methods have a pointer receiver, so that a
// typed nil of it is a Transport.
type ptrArm struct{ measure.Arm }

func (a *ptrArm) Name() string { return a.Arm.Name() }

// An arm registered from an init function, as an importer registers one.
func init() {
	if err := measure.Register(namedArm{measure.TCP, "test-registered-tcp"}); err != nil {
		panic(err)
	}
	if err := measure.Register(namedArm{measure.QUIC, "test-registered-quic"}); err != nil {
		panic(err)
	}
}

// Register refuses a nil arm, a malformed name and a second arm of a name;
// a good one is then listed last and found.
func TestRegisterRefuses(t *testing.T) {
	for _, c := range []struct {
		arm  measure.Transport
		want string
	}{
		{nil, "nil arm"},
		{measure.Arm("new-arm"), "an arm's name"},
		{namedArm{measure.TCP, ""}, "arm name"},
		{namedArm{measure.TCP, "TCP"}, "arm name"},
		{namedArm{measure.TCP, "tcp mux"}, "arm name"},
		{namedArm{measure.TCP, "tcp"}, "already registered"},
		// Names a record would refuse (results.CheckArmName).
		{namedArm{measure.TCP, "proxy-"}, "arm name"},
		{namedArm{measure.TCP, "my--proxy"}, "arm name"},
		{namedArm{measure.TCP, "a-name-of-thirty-three-characters"}, "arm name"},
		{(*ptrArm)(nil), "a nil *measure_test.ptrArm"},
	} {
		if err := measure.Register(c.arm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%v) = %v, want an error saying %q", c.arm, err, c.want)
		}
	}
	names := measure.ArmNames()
	if i, j := slices.Index(names, "test-registered-tcp"), slices.Index(names, "quic-priority"); i < 0 || i < j {
		t.Errorf("ArmNames() = %v, want test-registered-tcp after the built-in arms", names)
	}
	if a, err := measure.Lookup("test-registered-tcp"); err != nil || a != "test-registered-tcp" || a.QUIC() {
		t.Errorf("Lookup = %v, %v", a, err)
	}
}

// Lookup takes a registered arm and tcp-<controller>, refuses other names,
// and registers nothing: asking about an arm leaves the list of arms as
// it was.
func TestLookupChangesNothing(t *testing.T) {
	before := measure.ArmNames()
	for _, name := range []string{"tcp-cubic", "tcp-quicreno", "quic-per-channel"} {
		a, err := measure.Lookup(name)
		if err != nil || string(a) != name {
			t.Errorf("Lookup(%q) = %q, %v", name, a, err)
		}
		_ = a.QUIC()
		_, _ = a.PinnedCC()
	}
	for _, name := range []string{"tcp-", "tcp-Reno", "tcp-my_cc", "tcp-averyveryverylongname", "", "udp"} {
		if a, err := measure.Lookup(name); !errors.Is(err, measure.ErrUnknownArm) {
			t.Errorf("Lookup(%q) = %q, %v; want ErrUnknownArm", name, a, err)
		}
	}
	if after := measure.ArmNames(); !slices.Equal(before, after) {
		t.Errorf("the arms were %v, and after the lookups %v", before, after)
	}
}

// An arm says whether it carries QUIC: the built-in QUIC arms and a
// registered Transport whose QUIC is true do; tcp-<controller>, tcp-mux
// and a name no arm has do not.
func TestArmQUIC(t *testing.T) {
	for a, want := range map[measure.Arm]bool{
		measure.TCP: false, measure.QUIC: true, measure.QUICPerChannel: true, measure.QUICPriority: true,
		measure.TCPMux: false, "tcp-reno": false, "test-registered-quic": true, "test-registered-tcp": false, "sctp": false,
	} {
		if got := a.QUIC(); got != want {
			t.Errorf("%s.QUIC() = %v, want %v", a, got, want)
		}
	}
}

// CellCC: kernel TCP's arms and quinn's run the cell's controller, quic-go's
// keep their own, an unknown arm runs none.
func TestArmCellCC(t *testing.T) {
	for a, want := range map[measure.Arm]bool{
		measure.TCP: true, "tcp-reno": true, measure.TCPMux: true, measure.QUIC: false, measure.QUICPerChannel: false,
		measure.Quinn: true, measure.QuinnPriority: true, "test-registered-quic": false, "test-registered-tcp": true, "sctp": false,
	} {
		if got := a.CellCC(); got != want {
			t.Errorf("%s.CellCC() = %v, want %v", a, got, want)
		}
	}
}

// Available: an unknown arm is refused; a built-in one is there.
func TestArmAvailable(t *testing.T) {
	if err := measure.Arm("sctp").Available(context.Background()); !errors.Is(err, measure.ErrUnknownArm) {
		t.Errorf("sctp: %v, want ErrUnknownArm", err)
	}
	if err := measure.TCP.Available(context.Background()); err != nil {
		t.Errorf("tcp: %v", err)
	}
}

// An arm that is not one of transport's runs through Run like the
// built-in ones: here the tcp arm behind a name of its own, on loopback.
func TestRunOwnArm(t *testing.T) {
	cfg := shortWorkload()
	r, err := measure.Run(context.Background(), measure.Loopback(), "test-registered-tcp", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Arm != "test-registered-tcp" || r.Client == nil || len(r.Client.Samples) == 0 || r.ClientState.Arm != transport.ArmTCP {
		t.Errorf("arm %q, client %v, state %+v", r.Arm, r.Client != nil, r.ClientState)
	}
}

// PrepareOptions gives the QUIC arms a certificate pair (the client's half
// without the key) and the others the caller's options at both ends.
func TestPrepareOptions(t *testing.T) {
	cfg := shortWorkload()
	s, c, err := measure.PrepareOptions(measure.QUIC, cfg, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Certificate.KeyPEM) == 0 || len(c.Certificate.KeyPEM) != 0 || len(c.Certificate.CertPEM) == 0 || s.Channels != len(cfg.Channels) {
		t.Errorf("quic: server %+v client %+v", s, c)
	}
	s, c, err = measure.PrepareOptions(measure.TCP, cfg, transport.Options{CongestionControl: "reno"})
	if err != nil || len(s.Certificate.CertPEM) != 0 || c.CongestionControl != "reno" || c.Channels != len(cfg.Channels) {
		t.Errorf("tcp: %+v %+v %v", s, c, err)
	}
	if _, _, err := measure.PrepareOptions("", cfg, transport.Options{}); err == nil {
		t.Error("no arm prepared")
	}
}

// Every arm a record can come from has a name records accept.
func TestArmNamesAreRecordNames(t *testing.T) {
	for _, n := range measure.ArmNames() {
		if err := results.CheckArmName(n); err != nil {
			t.Errorf("registered arm %q: %v", n, err)
		}
	}
}
