package spicetunnel

import (
	"context"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/transport"
)

// RunEnd refuses an end it could only run wrongly, before it listens or
// dials, saying what is missing.
func TestRunEndSaysWhatIsMissing(t *testing.T) {
	secret := transport.Options{CarrierSecret: []byte("a test secret of more than sixteen bytes")}
	for _, tc := range []struct {
		c    EndConfig
		want string
	}{
		{EndConfig{Side: "middle", Listen: "127.0.0.1:0", Options: secret}, `side "middle"`},
		{EndConfig{Side: "client", Listen: "127.0.0.1:0", Options: secret}, "needs Server"},
		{EndConfig{Side: "client", Arm: transport.ArmQUIC, Listen: "127.0.0.1:0", Server: "127.0.0.1:1", Options: secret}, "needs CertFile"},
		{EndConfig{Side: "server", Listen: "127.0.0.1:0", Options: secret}, "needs Spice"},
		{EndConfig{Side: "server", Arm: transport.ArmQUIC, Listen: "127.0.0.1:0", Spice: "127.0.0.1:1", CertFile: "c", Options: secret}, "CertFile and KeyFile"},
		{EndConfig{Side: "server", Arm: transport.ArmTCP, Spice: "127.0.0.1:1", Options: secret}, "Listen is empty"},
		{EndConfig{Side: "server", Arm: transport.ArmTCP, Listen: "127.0.0.1:0", Spice: "127.0.0.1:1"}, "CarrierSecret is empty"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a config that passed would return at once
		_, err := RunEnd(ctx, tc.c, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.c, err, tc.want)
		}
	}
}
