package transport_test

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// rawMuxCarrier connects to ln as a tcp-mux carrier's client that writes
// its own bytes: the transport's header with the secret, then the hello.
func rawMuxCarrier(ctx context.Context, t *testing.T, ln *transport.MuxCarrierListener, o transport.Options) io.ReadWriteCloser {
	t.Helper()
	tc, err := transport.DialCarrier(ctx, transport.ArmTCP, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	ch, err := tc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Write([]byte{'Q', 'B', 'M', 'X', 2, byte(transport.MuxCarrierChannels), 1, 0}); err != nil {
		t.Fatal(err)
	}
	return ch
}

// Frames for a channel the client never opened are refused, not buffered:
// data, fin and credit alike, each ending its carrier with a reason.
func TestMuxCarrierUnopenedChannel(t *testing.T) {
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret})
	for _, frame := range [][]byte{{'D', 7, 0, 1, 'x'}, {'F', 7, 0, 0}, {'C', 7, 0, 4, 0, 0, 0, 1}} {
		ch := rawMuxCarrier(ctx, t, ln, o)
		if _, err := ch.Write(frame); err != nil {
			t.Fatal(err)
		}
		var ce *transport.ChannelError
		if _, err := ln.Accept(ctx); !errors.As(err, &ce) || !strings.Contains(err.Error(), "for channel 7 before its open frame") {
			t.Errorf("frame % x for an unopened channel: %v, want a refusal before its open frame", frame, err)
		}
	}
}

// The client end refuses the same from the listener's side: a frame for
// a channel it has not opened ends the carrier, and its open channels
// read why.
func TestMuxCarrierClientRefusesUnopened(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := transport.Options{CarrierSecret: muxSecret}
	ln, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mine, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Write([]byte{'D', 9, 0, 1, 'x'}); err != nil {
		t.Fatal(err)
	}
	_ = mine.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := mine.Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "for channel 9 before its open frame") {
		t.Errorf("the client's open channel reads %v, want the refusal of channel 9's frame", err)
	}
}

// Many small frames cost what they carry, not a frame buffer each: 10,000
// one-byte frames left unread hold well under the 160 MiB that a 16 KiB
// buffer per frame would.
func TestMuxCarrierSmallFramesCoalesce(t *testing.T) {
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret})
	ch := rawMuxCarrier(ctx, t, ln, o)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 10000
	frames := []byte{'O', 0, 0, 0}
	for range n {
		frames = append(frames, 'D', 0, 0, 1, 'x')
	}
	// Channel 1's byte comes after every frame of channel 0: once it is
	// read, they have all been delivered.
	frames = append(frames, 'O', 1, 0, 0, 'D', 1, 0, 1, 'y')
	if _, err := ch.Write(frames); err != nil {
		t.Fatal(err)
	}
	var chans []transport.CarrierChannel
	for range 2 {
		c, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		chans = append(chans, c)
	}
	if _, err := io.ReadFull(chans[1], make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Errorf("%d one-byte frames unread hold %d MiB of heap; want under 16", n, grew>>20)
	}
	got, err := io.ReadFull(chans[0], make([]byte, n))
	if err != nil || got != n {
		t.Errorf("read %d of the %d bytes: %v", got, n, err)
	}
}

// A carrier end without the secret, or with a channel count, is refused
// before it listens or connects.
func TestMuxCarrierOptionsRefused(t *testing.T) {
	ctx := context.Background()
	if ln, err := transport.ListenMuxCarrier(ctx, "127.0.0.1:0", transport.Options{}); err == nil || !strings.Contains(err.Error(), "CarrierSecret") {
		if ln != nil {
			ln.Close()
		}
		t.Errorf("a listener without a secret: %v, want a refusal naming CarrierSecret", err)
	}
	if _, err := transport.DialMuxCarrier(ctx, "127.0.0.1:9", transport.Options{}); err == nil || !strings.Contains(err.Error(), "CarrierSecret") {
		t.Errorf("a client without a secret: %v, want a refusal naming CarrierSecret", err)
	}
	if _, err := transport.DialMuxCarrier(ctx, "127.0.0.1:9", transport.Options{CarrierSecret: muxSecret, Channels: 5}); err == nil || !strings.Contains(err.Error(), "Options.Channels is 5") {
		t.Errorf("a client with 5 channels: %v, want a refusal naming Options.Channels", err)
	}
}

// What a carrier listener keeps is bounded however many connections come
// and go: the last transport.MaxEndedListed carriers to end, with the rest
// counted, and at most MaxMuxRefusalsQueued refusals while Accept is not
// called.
func TestMuxCarrierListenerBounded(t *testing.T) {
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret})
	const carriers = transport.MaxEndedListed + 20
	for range carriers {
		c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Open(ctx); err != nil {
			t.Fatal(err)
		}
		ch, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		ch.Close()
	}
	var st transport.State
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st = ln.State(); st.UnlistedConnections >= carriers-transport.MaxEndedListed {
			break
		}
	}
	if len(st.TCP) != transport.MaxEndedListed || st.UnlistedConnections != carriers-transport.MaxEndedListed {
		t.Errorf("after %d carriers State lists %d and %d unlisted; want %d and %d", carriers, len(st.TCP), st.UnlistedConnections,
			transport.MaxEndedListed, carriers-transport.MaxEndedListed)
	}

	wrong := transport.Options{CarrierSecret: []byte("another secret of sixteen bytes")}
	const bad = 3 * transport.MaxMuxRefusalsQueued
	for range bad {
		if c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), wrong); err == nil {
			defer c.Close()
		}
	}
	time.Sleep(time.Second) // for the listener to refuse them all
	refusals := 0
	for {
		actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := ln.Accept(actx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		refusals++
	}
	if refusals == 0 || refusals > transport.MaxMuxRefusalsQueued {
		t.Errorf("%d bad carriers left %d refusals for Accept; want 1 to %d", bad, refusals, transport.MaxMuxRefusalsQueued)
	}
}

// Carriers that connect and send no hello do not lock others out: with a
// limit of 4, four idle ones give way to a real carrier, and are closed
// within HandshakeTimeout; four real carriers fill the limit, and the
// fifth is told why it is refused.
func TestMuxCarrierIdleAndLimit(t *testing.T) {
	const limit = 4
	ctx, o, ln := muxCarrierListener(t, transport.Options{CarrierSecret: muxSecret, CarrierLimit: limit, CarrierPeerLimit: 2 * limit,
		HandshakeTimeout: 2 * time.Second})
	var idle []transport.CarrierChannel
	for range limit {
		tc, err := transport.DialCarrier(ctx, transport.ArmTCP, ln.Addr().String(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		ch, err := tc.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, ch)
	}
	started := time.Now()
	time.Sleep(200 * time.Millisecond) // for the listener to take them
	echo := func(c *transport.MuxCarrier) error {
		ch, err := c.Open(ctx)
		if err != nil {
			return err
		}
		if _, err := ch.Write([]byte("k")); err != nil {
			return err
		}
		_ = ch.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadFull(ch, make([]byte, 1))
		return err
	}
	go func() {
		for {
			ch, err := ln.Accept(ctx)
			var ce *transport.ChannelError
			if errors.As(err, &ce) {
				continue
			}
			if err != nil {
				return
			}
			go io.Copy(ch, ch)
		}
	}()
	for i := range limit + 1 {
		c, err := transport.DialMuxCarrier(ctx, ln.Addr().String(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = echo(c)
		switch {
		case i < limit && err != nil:
			t.Errorf("real carrier %d beside %d idle ones: %v", i+1, limit, err)
		case i == limit && (err == nil || !strings.Contains(err.Error(), "refused this carrier") || !strings.Contains(err.Error(), "CarrierLimit")):
			t.Errorf("carrier %d past the limit of %d: %v, want a refusal naming CarrierLimit", i+1, limit, err)
		}
	}
	for i, ch := range idle {
		_ = ch.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(started.Add(4 * time.Second))
		if _, err := ch.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("idle carrier %d still open %v after it connected; the listener waits 2s for a hello", i+1, time.Since(started).Round(time.Millisecond))
		}
	}
}
