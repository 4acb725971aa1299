package measure_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// What Arm cannot run is refused before any socket is made, saying what to
// change, and the Repeat records the refusal.
func TestArmRefusesWhatItCannotRun(t *testing.T) {
	good := spicelike.Defaults()
	noEcho := spicelike.Defaults()
	noEcho.Channels[2].Role = spicelike.Quiet
	badWorkload := spicelike.Defaults()
	badWorkload.Duration = 0
	dial := func(context.Context, string, string) (net.Conn, error) { return nil, nil }
	cases := []struct {
		name string
		path measure.Path
		arm  measure.Arm
		w    spicelike.Config
		opts []transport.Options
		want string
	}{
		{"two options", measure.Loopback(), measure.TCP, good, []transport.Options{{}, {}}, "at most one transport.Options"},
		{"unknown arm", measure.Loopback(), measure.Arm("sctp"), good, nil, "unknown arm"},
		{"bad workload", measure.Loopback(), measure.TCP, badWorkload, nil, "Duration is 0s"},
		{"no address", measure.Path{}, measure.TCP, good, nil, "use OverLink(link) or Loopback()"},
		{"hooks in options", measure.Loopback(), measure.TCP, good, []transport.Options{{DialContext: dial}}, "set them there"},
		{"channel count", measure.Loopback(), measure.TCP, good, []transport.Options{{Channels: 3}}, "leave Channels 0"},
		{"nothing to prioritise", measure.Loopback(), measure.QUICPriority, noEcho, nil, "has none: add one"},
		{"congestion control on quic", measure.Loopback(), measure.QUIC, good, []transport.Options{{CongestionControl: "reno"}},
			"leave Options.CongestionControl empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := measure.Run(ctx, c.path, c.arm, c.w, c.opts...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
			if r.Repeat.Failed != err.Error() || r.Client != nil {
				t.Errorf("Repeat.Failed %q, client result %v", r.Repeat.Failed, r.Client)
			}
		})
	}
}
