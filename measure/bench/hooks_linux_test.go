package bench

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// TestTransportOverALinkInProcess opens a session across a shaped link from
// one process and ordinary goroutines: the transport makes each end's
// sockets through that end's Namespace methods (Options' socket hooks), so
// no thread has to be moved into a namespace by hand.
func TestTransportOverALinkInProcess(t *testing.T) {
	link := shapedlinktest.New(t, "40:10")
	addr := net.JoinHostPort(link.ServerAddr().String(), "4433")
	cert, err := transport.NewCertificate(link.ServerAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range []transport.Arm{transport.ArmTCP, transport.ArmQUIC} {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			so := transport.Options{Channels: 2, Certificate: cert,
				Listen: link.Server().Listen, ListenPacket: link.Server().ListenPacket}
			co := transport.Options{Channels: 2, Certificate: cert.ClientOnly(),
				ListenPacket: link.Client().ListenPacket, DialContext: link.Client().DialContext}
			ln, err := transport.Listen(ctx, arm, addr, so)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			c, err := transport.Dial(ctx, arm, addr, co)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := ln.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if c.ConnectTime() < 40*time.Millisecond {
				t.Errorf("connect time %v is below the link's 40 ms round trip: the session did not cross it", c.ConnectTime())
			}
			go s.Channels()[1].Write([]byte("over the link"))
			buf := make([]byte, 13)
			if _, err := io.ReadFull(c.Channels()[1], buf); err != nil || string(buf) != "over the link" {
				t.Errorf("read %q, %v", buf, err)
			}
		})
	}
}
