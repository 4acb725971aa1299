package spicelive

import (
	"testing"

	"github.com/shakenfist/quicbench/measure"
)

// The tunnel's ends take an arm's transport and its buffers, and leave
// TCP_NOTSENT_LOWAT off a QUIC carrier.
func TestTunnelOptionsOfArmsWithSettings(t *testing.T) {
	c := goodConfig()
	c.Arms = []measure.Arm{"tcp-bbr+bounded", "quic+bounded"}
	if o := tunnelOptions(c, "tcp-bbr+bounded"); o.CongestionControl != "bbr" || o.NotSentLowat != 16<<10 {
		t.Errorf("tunnel options %+v, want bbr with TCP_NOTSENT_LOWAT 16 KiB", o)
	}
	if o := tunnelOptions(c, "quic+bounded"); o.NotSentLowat != 0 {
		t.Errorf("quic's tunnel options set TCP_NOTSENT_LOWAT: %+v", o)
	}
}
