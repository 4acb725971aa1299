package spicetunnel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// lockedBuffer is a log destination for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), "\n")
}

// failingListener's Accept fails for good.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) { return nil, errors.New("the socket is gone") }

// A carrier listener whose socket fails ends Serve with the reason, at
// once and with one line of log (it used to take the failure for one
// channel's and spin, logging it as fast as it could).
func TestServerEndStopsWhenTheListenerFails(t *testing.T) {
	o := transport.Options{Listen: func(ctx context.Context, network, address string) (net.Listener, error) {
		ln, err := (&net.ListenConfig{}).Listen(ctx, network, address)
		return failingListener{ln}, err
	}}
	cl, err := transport.ListenCarrier(context.Background(), transport.ArmTCP, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var logs lockedBuffer
	server := &ServerEnd{Listener: cl, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Dial: func(context.Context) (net.Conn, error) { return nil, errors.New("not reached") }}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the socket is gone") {
			t.Errorf("Serve after the listener failed: %v, want the reason", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("Serve still running 3 s after its listener failed, with %d lines of log", logs.lines())
	}
	if n := logs.lines(); n > 1 {
		t.Errorf("%d lines of log for one failure", n)
	}
}

// A flood of refused connections is logged at a bounded rate, not a line
// each, and the channels still come through.
func TestServerEndLogsRefusalsAtABoundedRate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var logs lockedBuffer
	server := &ServerEnd{Listener: cl, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Dial: func(context.Context) (net.Conn, error) { return nil, errors.New("not reached") }}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx) }()
	for range 200 {
		c, err := net.Dial("tcp", cl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n and more than a header's worth"))
		c.Close()
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	// A burst of 10, then one a second.
	if n := logs.lines(); n < 1 || n > 15 {
		t.Errorf("%d lines of log for 200 refused connections, want a bounded few:\n%s", n, logs.b.String())
	}
}

// With a secret, a channel without the proof never reaches spice-server.
func TestServerEndDialsOnlyForTheSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	secret := []byte("sixteen bytes or more of secret")
	cl, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", transport.Options{CarrierSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var dials atomic.Int64
	echo := echoServer(t)
	server := &ServerEnd{Listener: cl, Dial: func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, "tcp", echo)
	}}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx) }()
	for _, s := range [][]byte{nil, []byte("a different secret, as long")} {
		carrier, err := transport.DialCarrier(ctx, transport.ArmTCP, cl.Addr().String(), transport.Options{CarrierSecret: s})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := carrier.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ch.Write([]byte("let me in"))
		ch.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, _ := io.Copy(io.Discard, ch); n != 0 {
			t.Errorf("a channel with secret %q got %d bytes back", s, n)
		}
		carrier.Close()
	}
	carrier, err := transport.DialCarrier(ctx, transport.ArmTCP, cl.Addr().String(), transport.Options{CarrierSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer carrier.Close()
	ch, err := carrier.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch.Write([]byte("hello"))
	ch.CloseWrite()
	if back, err := io.ReadAll(ch); string(back) != "hello" {
		t.Errorf("with the secret: %q, %v", back, err)
	}
	stop()
	<-done
	if n := dials.Load(); n != 1 {
		t.Errorf("spice-server dialled %d times, want once (for the channel with the secret)", n)
	}
}

// echoServer echoes every connection until the test ends.
func echoServer(t *testing.T) string {
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
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// Two carriers each open a channel 0 through one server end: each keeps
// its own capture files and its own trace records, told apart by the
// carrier id (the second used to truncate the first's files).
func TestServerEndTellsCarriersApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	dir := t.TempDir()
	var trace bytes.Buffer
	tracer, _ := NewTracer(&trace, spicetrace.SideServer, "")
	spice := newFakeServer(t)
	server := &ServerEnd{Listener: cl, Trace: tracer, CaptureDir: dir, Dial: func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", spice.ln.Addr().String())
	}}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx) }()
	ids := map[string]string{}
	for i, ct := range []spiceproto.ChannelType{spiceproto.ChannelMain, spiceproto.ChannelCursor} {
		carrier, err := transport.DialCarrier(ctx, transport.ArmTCP, cl.Addr().String(), transport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer carrier.Close()
		ch, err := carrier.Open(ctx)
		if err != nil || ch.Index() != 0 {
			t.Fatalf("Open: %v, index %d", err, ch.Index())
		}
		// A SPICE link stage, different for each, as fakeClient has it.
		link := spiceproto.LinkMess{ChannelType: ct, CommonCaps: caps}.Marshal()
		ch.Write(link)
		if _, err := io.ReadFull(ch, make([]byte, len(spiceproto.LinkReply{CommonCaps: caps}.Marshal()))); err != nil {
			t.Fatal(err)
		}
		ticket := append(le.AppendUint32(nil, uint32(spiceproto.CapAuthSpice)), bytes.Repeat([]byte{byte(i)}, spiceproto.TicketSize)...)
		ch.Write(ticket)
		if _, err := io.ReadFull(ch, make([]byte, 4)); err != nil {
			t.Fatal(err)
		}
		ch.CloseWrite()
		io.Copy(io.Discard, ch)
		ids[carrierName(carrier.ID())] = string(link) + string(ticket)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(server.Channels()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	for id, want := range ids {
		got, err := os.ReadFile(filepath.Join(dir, captureName(mustParseHex(t, id), 0, spiceproto.ClientToServer)))
		if err != nil || string(got) != want {
			t.Errorf("carrier %s's capture: %q, %v; want %q", id, got, err, want)
		}
	}
	seen := map[string]bool{}
	for _, s := range server.Channels() {
		seen[s.Carrier] = true
	}
	if err := tracer.Flush(); err != nil {
		t.Fatal(err)
	}
	tr, err := spicetrace.Read(&trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tr.Records {
		seen["trace "+r.Carrier] = true
	}
	for id := range ids {
		if !seen[id] || !seen["trace "+id] {
			t.Errorf("carrier %s: in the stats %v, in the trace %v", id, seen[id], seen["trace "+id])
		}
	}
	// Nothing is ever overwritten: a channel whose files exist is carried
	// without a capture.
	r := newRelay(mustParseHex(t, firstKey(ids)), 0, nil, nil, nil, slog.New(slog.DiscardHandler), nil)
	captureTo(r, dir, slog.New(slog.DiscardHandler))()
	if r.capture[spiceproto.ClientToServer] != nil {
		t.Error("an existing capture file was opened again")
	}
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

func mustParseHex(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// No channel carried is an empty list, not null.
func TestNoChannelsIsAnEmptyList(t *testing.T) {
	for _, v := range []any{(&ServerEnd{}).Channels(), (&ClientEnd{}).Channels()} {
		if b, _ := json.Marshal(v); string(b) != "[]" {
			t.Errorf("no channels: %s", b)
		}
	}
}
