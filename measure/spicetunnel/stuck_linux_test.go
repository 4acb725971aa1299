package spicetunnel

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// floodServer accepts connections and writes to each without end, reading
// nothing: a spice-server whose client has stopped reading.
func floodServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestServerEndStopsWithWritesBlocked: a relay whose write to its channel
// is blocked, the peer having stopped reading (a full display channel at
// the end of a lossy run), ends when Serve's context does, on every arm.
// A QUIC stream's Close leaves such a write blocked.
func TestServerEndStopsWithWritesBlocked(t *testing.T) {
	cert, err := transport.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	spice := floodServer(t)
	for _, arm := range []transport.Arm{transport.ArmTCP, transport.ArmQUIC, transport.ArmQUICPerChannel} {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			o := transport.Options{}
			if arm.IsQUIC() {
				o.Certificate = cert
			}
			cl, err := transport.ListenCarrier(ctx, arm, "127.0.0.1:0", o)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			server := &ServerEnd{Listener: cl, Dial: func(ctx context.Context) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", spice)
			}}
			co := o
			co.Certificate = o.Certificate.ClientOnly()
			carrier, err := transport.DialCarrier(ctx, arm, cl.Addr().String(), co)
			if err != nil {
				t.Fatal(err)
			}
			defer carrier.Close()
			sctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- server.Serve(sctx) }()
			ch, err := carrier.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer ch.Close()
			// Read a little, so the relay is known to be up, then nothing:
			// the flood fills the channel's window and the relay's write
			// blocks.
			if _, err := ch.Read(make([]byte, 1024)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
			stop()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Serve did not return 20 s after its context ended: a relay's blocked write was not ended")
			}
		})
	}
}
