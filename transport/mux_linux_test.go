package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// muxPair is a tcp-mux session of n channels over loopback: the client's
// end and the server's.
func muxPair(t *testing.T, n int) (client, server *transport.MuxSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := transport.Options{Channels: n}
	ln, err := transport.ListenMux(ctx, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *transport.MuxSession, 1)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		accepted <- s
	}()
	client, err = transport.DialMux(ctx, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server = <-accepted
	if server == nil {
		t.FailNow()
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

// pattern is the byte at offset i of channel ch's stream from one end.
func pattern(end, ch, i int) byte { return byte(end*101 + ch*31 + i*7 + i/251) }

// Every channel carries its own bytes, in order, both ways at once, when
// all write concurrently in writes of assorted sizes, some larger than a
// frame; CloseWrite then ends a direction with io.EOF at the peer.
func TestTCPMuxChannelsCarryTheirOwnBytes(t *testing.T) {
	const n, size = 5, 3<<20 + 17
	client, server := muxPair(t, n)
	var wg sync.WaitGroup
	for end, s := range []*transport.MuxSession{client, server} {
		peer := server
		if end == 1 {
			peer = client
		}
		for ch := range n {
			w, r := s.Channels()[ch], peer.Channels()[ch]
			wg.Go(func() {
				b := make([]byte, size)
				for i := range b {
					b[i] = pattern(end, ch, i)
				}
				sizes := []int{1, 7, 100, 4096, transport.MuxMaxPayload, transport.MuxMaxPayload + 1, 40000, 3}
				for off, j := 0, 0; off < size; j++ {
					k := min(size-off, sizes[j%len(sizes)])
					if _, err := w.Write(b[off : off+k]); err != nil {
						t.Errorf("end %d channel %d: write: %v", end, ch, err)
						return
					}
					off += k
				}
				if err := w.(transport.Channel).CloseWrite(); err != nil {
					t.Errorf("end %d channel %d: CloseWrite: %v", end, ch, err)
				}
			})
			wg.Go(func() {
				got, err := io.ReadAll(r)
				if err != nil {
					t.Errorf("end %d channel %d: read: %v", end, ch, err)
				}
				if len(got) != size {
					t.Errorf("end %d channel %d: %d bytes arrived, want %d", end, ch, len(got), size)
					return
				}
				for i, c := range got {
					if c != pattern(end, ch, i) {
						t.Errorf("end %d channel %d: byte %d is %#02x, want %#02x", end, ch, i, c, pattern(end, ch, i))
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

// fillUntilStalled writes on ch until its writes stop making progress,
// and returns the bytes written and a channel that yields the writer's
// error once it stops.
func fillUntilStalled(t *testing.T, ch io.Writer) (written *atomic.Int64, done <-chan error) {
	t.Helper()
	written = new(atomic.Int64)
	errc := make(chan error, 1)
	go func() {
		b := bytes.Repeat([]byte{0x5a}, 8<<10)
		for {
			n, err := ch.Write(b)
			written.Add(int64(n))
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	last, still := int64(-1), 0
	for still < 6 {
		time.Sleep(50 * time.Millisecond)
		if w := written.Load(); w != last {
			last, still = w, 0
			continue
		}
		still++
	}
	return written, errc
}

// A channel whose reader does not read stops its writer at exactly the
// window, and holds up no other channel; reading it lets its writer on.
func TestTCPMuxWindow(t *testing.T) {
	client, server := muxPair(t, 2)
	written, _ := fillUntilStalled(t, client.Channels()[0])
	if w := written.Load(); w != transport.MuxWindow {
		t.Fatalf("a writer whose peer reads nothing stopped after %d bytes, want the %d-byte window", w, transport.MuxWindow)
	}
	go client.Channels()[1].Write([]byte("x"))
	b := make([]byte, 1)
	_ = server.Channels()[1].(transport.Channel).SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(server.Channels()[1], b); err != nil || b[0] != 'x' {
		t.Fatalf("channel 1 while channel 0's reader was stopped: %q, %v", b, err)
	}
	go io.Copy(io.Discard, server.Channels()[0])
	deadline := time.Now().Add(10 * time.Second)
	for written.Load() <= transport.MuxWindow {
		if time.Now().After(deadline) {
			t.Fatal("reading channel 0 did not let its writer go on")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A write waiting for credit ends at its deadline; what it reports written
// is what arrives, and the session goes on intact afterwards.
func TestTCPMuxWriteDeadline(t *testing.T) {
	client, server := muxPair(t, 2)
	written, done := fillUntilStalled(t, client.Channels()[0])
	_ = client.Channels()[0].(transport.Channel).SetWriteDeadline(time.Unix(1, 0))
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the stalled write ended with %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write deadline in the past did not end a stalled write")
	}
	got := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, server.Channels()[0])
		got <- n
	}()
	if _, err := client.Channels()[1].Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	if _, err := io.ReadFull(server.Channels()[1], b); err != nil || string(b) != "after" {
		t.Fatalf("channel 1 after the deadline: %q, %v", b, err)
	}
	_ = client.Channels()[0].(transport.Channel).SetWriteDeadline(time.Time{})
	if err := client.Channels()[0].(transport.Channel).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n := <-got; n != written.Load() {
		t.Errorf("channel 0 delivered %d bytes; its writes reported %d", n, written.Load())
	}
}

// A read deadline ends a waiting Read with os.ErrDeadlineExceeded, one in
// the past at once, and the channel reads again once it is cleared.
func TestTCPMuxReadDeadline(t *testing.T) {
	client, server := muxPair(t, 1)
	ch := server.Channels()[0].(transport.Channel)
	_ = ch.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	start := time.Now()
	if _, err := ch.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("read with a 100 ms deadline: %v after %v", err, time.Since(start))
	}
	_ = ch.SetReadDeadline(time.Time{})
	go client.Channels()[0].Write([]byte("y"))
	b := make([]byte, 1)
	if _, err := io.ReadFull(ch, b); err != nil || b[0] != 'y' {
		t.Fatalf("read after clearing the deadline: %q, %v", b, err)
	}
}

// A client of another channel count is refused, and the error says so.
func TestTCPMuxRefusesChannelMismatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := transport.ListenMux(ctx, "127.0.0.1:0", transport.Options{Channels: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := transport.DialMux(ctx, ln.Addr().String(), transport.Options{Channels: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := ln.Accept(ctx); err == nil || !strings.Contains(err.Error(), "the client has 3 channels and this server 5") {
		t.Errorf("Accept: %v, want the channel counts named", err)
	}
	if _, err := transport.DialMux(ctx, ln.Addr().String(), transport.Options{}); err == nil || !strings.Contains(err.Error(), "Channels is 0") {
		t.Errorf("Dial with no channels: %v", err)
	}
}

// A session whose connection failed (the peer reset it) still reports the
// TCP_INFO it read before closing the connection.
func TestTCPMuxStateAfterReset(t *testing.T) {
	client, server := muxPair(t, 1)
	ch := server.Channels()[0]
	if _, err := ch.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(client.Channels()[0], b); err != nil {
		t.Fatal(err)
	}
	client.Close()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = ch.Write(make([]byte, 1024))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a closed peer kept succeeding")
	}
	st := server.State()
	if len(st.TCP) != 1 || st.TCP[0].InfoError != "" || st.TCP[0].Info.Algorithm == "" || st.TCP[0].Info.BytesAcked == 0 {
		t.Errorf("state after the write failed (%v): %+v", err, st.TCP)
	}
}
