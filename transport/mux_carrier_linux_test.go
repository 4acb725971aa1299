package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

var muxSecret = []byte("sixteen bytes or more of secret")

// muxCarrierListener listens on loopback with o, until the test ends; ctx
// bounds the test.
func muxCarrierListener(t *testing.T, o transport.Options) (context.Context, transport.Options, *transport.MuxCarrierListener) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ln, err := transport.ListenMuxCarrier(ctx, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ctx, o, ln
}

// Channels opened one at a time over a tcp-mux carrier arrive at the
// listener in order, with the carrier's id, and each carries its own bytes
// both ways; a channel's close reaches its peer and leaves the others
// going; both ends' State list the one connection, pinned to reno.
func TestMuxCarrier(t *testing.T) {
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret, CongestionControl: "reno"})
	c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var client, server []transport.CarrierChannel
	for i := range 3 {
		ch, err := c.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sch, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Index() != i || sch.Index() != i || sch.Carrier() != c.ID() || ch.Carrier() != c.ID() {
			t.Fatalf("channel %d: client index %d, server index %d, carriers %x %x, want %x", i, ch.Index(), sch.Index(), ch.Carrier(), sch.Carrier(), c.ID())
		}
		client, server = append(client, ch), append(server, sch)
	}
	for i := range client {
		msg := []byte(strings.Repeat(string(rune('a'+i)), 100000))
		go client[i].Write(msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(server[i], got); err != nil || string(got) != string(msg) {
			t.Fatalf("channel %d client to server: %v", i, err)
		}
		go server[i].Write(msg[:10])
		if _, err := io.ReadFull(client[i], got[:10]); err != nil || string(got[:10]) != string(msg[:10]) {
			t.Fatalf("channel %d server to client: %v", i, err)
		}
	}
	if err := client[1].Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := server[1].Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("server's channel 1 after the client closed it: %d, %v, want EOF", n, err)
	}
	go client[2].Write([]byte("still"))
	b := make([]byte, 5)
	if _, err := io.ReadFull(server[2], b); err != nil || string(b) != "still" {
		t.Errorf("channel 2 after channel 1 closed: %q, %v", b, err)
	}
	for _, st := range []transport.State{c.State(), ln.State()} {
		if st.Arm != "tcp-mux" || st.Channels != 3 || len(st.TCP) != 1 || st.TCP[0].Channel != -1 ||
			st.CongestionControl != "reno" || st.TCP[0].Info.Algorithm != "reno" || st.TCP[0].InfoError != "" {
			t.Errorf("%s state: %+v", st.Role, st)
		}
	}
}

// A listener refuses a carrier without the secret, and a tcp-mux session's
// client, saying why, and goes on accepting.
func TestMuxCarrierRefused(t *testing.T) {
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret})
	wrong := transport.Options{CarrierSecret: []byte("another secret of sixteen bytes")}
	if c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), wrong); err == nil {
		defer c.Close()
	}
	var ce *transport.ChannelError
	if _, err := ln.Accept(ctx); !errors.As(err, &ce) || !strings.Contains(err.Error(), "proof") {
		t.Errorf("a carrier with another secret: %v, want a channel error about the proof", err)
	}
	c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if ch, err := ln.Accept(ctx); err != nil || ch.Index() != 0 {
		t.Errorf("the next carrier's channel: %v", err)
	}
	// A session's client reaches a carrier listener: the header is refused.
	s, err := transport.DialMux(ctx, ln.Addr().String(), transport.Options{Channels: 2})
	if err == nil {
		defer s.Close()
	}
	if _, err := ln.Accept(ctx); !errors.As(err, &ce) {
		t.Errorf("a session's client: %v, want a channel error", err)
	}
	// A carrier that opens channel 1 before channel 0 fails, and Accept
	// says so.
	tc, err := transport.DialCarrier(ctx, transport.ArmTCP, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tch, err := tc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hello := []byte{'Q', 'B', 'M', 'X', 2, byte(transport.MuxCarrierChannels), 1, 0}
	if _, err := tch.Write(append(hello, 'O', 1, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(ctx); !errors.As(err, &ce) || !strings.Contains(err.Error(), "the client opened channel 1, and the next is 0") {
		t.Errorf("a carrier opening channel 1 first: %v", err)
	}
	ln.Close()
	if _, err := ln.Accept(ctx); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// Channels opened at once, as a SPICE client opens its channels after the
// main channel's init, all arrive, in the order of their indices.
func TestMuxCarrierConcurrentOpens(t *testing.T) {
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret})
	for range 20 {
		c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), o)
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := c.Open(ctx)
				errs <- err
			}()
		}
		for i := range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			ch, err := ln.Accept(ctx)
			if err != nil || ch.Index() != i {
				t.Fatalf("accept %d: %v", i, err)
			}
		}
		c.Close()
	}
}
