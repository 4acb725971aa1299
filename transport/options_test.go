package transport

import (
	"context"
	"strings"
	"testing"
)

// A TCP congestion control given to a QUIC arm is refused by Listen and by
// Dial, before any socket is made, and the error says what to do: leave
// the field empty on the QUIC arms and pin the tcp arm instead. (The field
// was documented as ignored by the QUIC arms while both refused it with no
// advice.)
func TestCongestionControlRefusedOnQUICArmsWithAdvice(t *testing.T) {
	ctx := context.Background()
	cert, err := NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range []Arm{ArmQUIC, ArmQUICPerChannel, ArmQUICPriority} {
		o := Options{Channels: 2, CongestionControl: "reno", Certificate: cert}
		_, lerr := Listen(ctx, arm, "127.0.0.1:0", o)
		_, derr := Dial(ctx, arm, "127.0.0.1:9", o)
		for end, err := range map[string]error{"Listen": lerr, "Dial": derr} {
			if err == nil {
				t.Errorf("%s %s accepted CongestionControl %q", arm, end, o.CongestionControl)
				continue
			}
			msg := err.Error()
			for _, want := range []string{`"reno"`, "leave Options.CongestionControl empty for quic, quic-per-channel and quic-priority",
				"only for the tcp arm", QUICCongestionControl} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s %s: error %q does not mention %q", arm, end, msg, want)
				}
			}
		}
	}
}

// A packet size outside QUIC's and quic-go's bounds is refused, saying
// the bounds.
func TestPacketSizeBounds(t *testing.T) {
	for _, size := range []int{-1, 1199, 1453, 9000} {
		_, err := Options{Channels: 1, PacketSize: size}.validate(ArmQUIC)
		if err == nil || !strings.Contains(err.Error(), "use 1200 to 1452 bytes") {
			t.Errorf("PacketSize %d: %v", size, err)
		}
	}
	for _, size := range []int{0, 1200, 1280, 1452} {
		if _, err := (Options{Channels: 1, PacketSize: size}).validate(ArmQUIC); err != nil {
			t.Errorf("PacketSize %d: %v", size, err)
		}
	}
}
