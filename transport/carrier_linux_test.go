package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

var carrierArms = []Arm{ArmTCP, ArmQUIC, ArmQUICPerChannel}

func carrierPair(t *testing.T, arm Arm) (*CarrierListener, *Carrier) {
	t.Helper()
	o := options(t, arm, 0)
	ln, err := ListenCarrier(context.Background(), arm, "127.0.0.1:0", o)
	if err != nil {
		t.Fatalf("ListenCarrier: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	co := o
	co.Certificate = o.Certificate.ClientOnly()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := DialCarrier(ctx, arm, ln.Addr().String(), co)
	if err != nil {
		t.Fatalf("DialCarrier: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return ln, c
}

// Channels opened one at a time, at different moments, arrive with their
// index and carry bytes unchanged both ways, including the first bytes
// after the header.
func TestCarrierOpensChannelsOverTime(t *testing.T) {
	for _, arm := range carrierArms {
		t.Run(string(arm), func(t *testing.T) {
			ln, c := carrierPair(t, arm)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range 4 {
				ch, err := c.Open(ctx)
				if err != nil {
					t.Fatalf("Open %d: %v", i, err)
				}
				if ch.Index() != i {
					t.Errorf("Open %d: Index %d", i, ch.Index())
				}
				up := bytes.Repeat([]byte(fmt.Sprintf("up%d.", i)), 1000*(i+1))
				if _, err := ch.Write(up); err != nil {
					t.Fatal(err)
				}
				sc, err := ln.Accept(ctx)
				if err != nil {
					t.Fatalf("Accept %d: %v", i, err)
				}
				if sc.Index() != i {
					t.Errorf("accepted channel says index %d, want %d", sc.Index(), i)
				}
				got := make([]byte, len(up))
				if _, err := io.ReadFull(sc, got); err != nil || !bytes.Equal(got, up) {
					t.Fatalf("channel %d up: %d bytes, %v, equal %v", i, len(got), err, bytes.Equal(got, up))
				}
				down := []byte(fmt.Sprintf("down %d", i))
				if _, err := sc.Write(down); err != nil {
					t.Fatal(err)
				}
				got = make([]byte, len(down))
				if _, err := io.ReadFull(ch, got); err != nil || !bytes.Equal(got, down) {
					t.Fatalf("channel %d down: %q, %v", i, got, err)
				}
				// Half-close: the server reads EOF and can still answer.
				if err := ch.CloseWrite(); err != nil {
					t.Fatal(err)
				}
				if n, err := sc.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
					t.Errorf("after CloseWrite the server reads %d, %v; want EOF", n, err)
				}
				if _, err := sc.Write([]byte("late")); err != nil {
					t.Errorf("server write after the client's CloseWrite: %v", err)
				}
				if _, err := io.ReadFull(ch, make([]byte, 4)); err != nil {
					t.Errorf("client read after its CloseWrite: %v", err)
				}
				time.Sleep(20 * time.Millisecond) // channels arrive over time
			}
			cs, ss := c.State(), ln.State()
			if cs.Channels != 4 || ss.Channels != 4 {
				t.Errorf("State channels: client %d, server %d; want 4", cs.Channels, ss.Channels)
			}
			wantConns := map[Arm]int{ArmTCP: 4, ArmQUIC: 1, ArmQUICPerChannel: 4}[arm]
			if n := len(cs.TCP) + len(cs.QUIC); n != wantConns {
				t.Errorf("client State has %d connections, want %d", n, wantConns)
			}
			if n := len(ss.TCP) + len(ss.QUIC); n != wantConns {
				t.Errorf("server State has %d connections, want %d", n, wantConns)
			}
			for _, q := range append(cs.QUIC, ss.QUIC...) {
				if q.GSO {
					t.Errorf("a carrier's QUIC connection reports GSO in use")
				}
				if !q.Socket.GSOWrapper {
					t.Errorf("a carrier's QUIC socket is not behind the GSO-off wrapper")
				}
			}
			for _, tc := range append(cs.TCP, ss.TCP...) {
				if !tc.Options.NoDelay {
					t.Errorf("TCP_NODELAY off on a carrier connection")
				}
			}
		})
	}
}

// Channels of one carrier opened at once are told apart by their index.
func TestCarrierConcurrentOpens(t *testing.T) {
	for _, arm := range carrierArms {
		t.Run(string(arm), func(t *testing.T) {
			ln, c := carrierPair(t, arm)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			const n = 6
			errs := make(chan error, n)
			for range n {
				go func() {
					ch, err := c.Open(ctx)
					if err == nil {
						_, err = fmt.Fprintf(ch, "I am %03d", ch.Index())
					}
					errs <- err
				}()
			}
			seen := map[int]bool{}
			for range n {
				sc, err := ln.Accept(ctx)
				if err != nil {
					t.Fatal(err)
				}
				b := make([]byte, 8)
				if _, err := io.ReadFull(sc, b); err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("I am %03d", sc.Index()); string(b) != want {
					t.Errorf("channel %d carried %q, want %q", sc.Index(), b, want)
				}
				seen[sc.Index()] = true
			}
			for range n {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if len(seen) != n {
				t.Errorf("indices seen %v, want %d distinct", seen, n)
			}
		})
	}
}

func TestCarrierPinsCongestionControl(t *testing.T) {
	ln, err := ListenCarrier(context.Background(), ArmTCP, "127.0.0.1:0", Options{CongestionControl: "reno"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialCarrier(ctx, ArmTCP, ln.Addr().String(), Options{CongestionControl: "reno"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	if cc := c.State().CongestionControl; cc != "reno" {
		t.Errorf("client congestion control %q, want reno", cc)
	}
	if cc := ln.State().CongestionControl; cc != "reno" {
		t.Errorf("server congestion control %q, want reno", cc)
	}
}

func TestCarrierRefusesWhatItCannotDo(t *testing.T) {
	ctx := context.Background()
	if _, err := DialCarrier(ctx, ArmQUICPriority, "127.0.0.1:1", options(t, ArmQUIC, 0)); err == nil || !strings.Contains(err.Error(), "prioritise") {
		t.Errorf("quic-priority carrier: %v", err)
	}
	if _, err := ListenCarrier(ctx, ArmQUIC, "127.0.0.1:0", Options{}); err == nil || !strings.Contains(err.Error(), "Certificate") {
		t.Errorf("QUIC carrier listener without a certificate: %v", err)
	}
	if _, err := DialCarrier(ctx, Arm("sctp"), "127.0.0.1:1", Options{}); err == nil {
		t.Error("a carrier of an unknown arm")
	}
}

// A fixed-size session's client is told it reached a carrier listener,
// and the listener goes on accepting.
func TestCarrierListenerRefusesSessionHeaders(t *testing.T) {
	ln, err := ListenCarrier(context.Background(), ArmTCP, "127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		s, err := Dial(ctx, ArmTCP, ln.Addr().String(), Options{Channels: 1})
		if err == nil {
			defer s.Close()
			<-ctx.Done()
		}
	}()
	_, err = ln.Accept(ctx)
	var ce *ChannelError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not a quicbench carrier") {
		t.Fatalf("Accept of a session's channel: %v", err)
	}
	c, err := DialCarrier(ctx, ArmTCP, ln.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(ctx); err != nil {
		t.Errorf("the listener stopped after a bad header: %v", err)
	}
}

func TestCarrierCloseEndsEverything(t *testing.T) {
	for _, arm := range carrierArms {
		t.Run(string(arm), func(t *testing.T) {
			ln, c := carrierPair(t, arm)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ch, err := c.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ln.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := c.Open(ctx); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Open after Close: %v, want net.ErrClosed", err)
			}
			if _, err := ch.Write([]byte("x")); err == nil {
				// A write may be buffered; a read must fail.
				if _, err := ch.Read(make([]byte, 1)); err == nil {
					t.Error("the channel still reads after the carrier closed")
				}
			}
			_ = sc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadAll(sc); err != nil && !isPeerGone(err) {
				t.Errorf("server side after the client closed: %v", err)
			}
			if err := ln.Close(); err != nil {
				t.Errorf("listener Close: %v", err)
			}
			if _, err := ln.Accept(ctx); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
			}
		})
	}
}

// isPeerGone accepts the ways a read learns that the peer closed: a reset,
// or QUIC's connection close.
func isPeerGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "reset") || strings.Contains(s, "closed") || strings.Contains(s, "Application error")
}

// A TCP channel's last TCP_INFO is still reported after it closes, at
// both ends, whether the channel or the whole carrier or listener closed
// it: records taken at a run's end read them.
func TestCarrierTCPStateOutlivesClose(t *testing.T) {
	ln, c := carrierPair(t, ArmTCP)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var server []CarrierChannel
	for i := range 2 {
		ch, err := c.Open(ctx)
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		sc, err := ln.Accept(ctx)
		if err != nil {
			t.Fatalf("Accept %d: %v", i, err)
		}
		server = append(server, sc)
		if _, err := sc.Write(bytes.Repeat([]byte("x"), 64<<10)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(ch, make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			_ = ch.Close() // the channel alone; the other goes with the carrier
		}
	}
	_ = c.Close()
	_ = server[0].Close()
	_ = ln.Close() // the other server channel goes with the listener
	for _, st := range []State{c.State(), ln.State()} {
		if len(st.TCP) != 2 {
			t.Fatalf("%s: %d TCP connections in the state, want 2", st.Role, len(st.TCP))
		}
		for _, cs := range st.TCP {
			if cs.InfoError != "" || cs.Info.SegsOut == 0 {
				t.Errorf("%s channel %d after close: info error %q, %d segments out", st.Role, cs.Channel, cs.InfoError, cs.Info.SegsOut)
			}
		}
	}
}
