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
	for _, a := range []measure.Arm{"quic+bounded", "quinn-bbr+bounded"} {
		if o := tunnelOptions(c, a); o.NotSentLowat != 0 || o.CongestionControl != "" {
			t.Errorf("%s's tunnel options set TCP_NOTSENT_LOWAT or a TCP controller: %+v", a, o)
		}
		if r := c.forArm(a); r.spiceRcvBuf != 64<<10 {
			t.Errorf("%s: SO_RCVBUF towards spice-server %d, want 64 KiB", a, r.spiceRcvBuf)
		}
	}
}
