package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// muxSessions is a tcp-mux client and server of n channels over loopback.
func muxSessions(t *testing.T, n int) (client, server *MuxSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{Channels: n}
	ln, err := ListenMux(ctx, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *MuxSession, 1)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		accepted <- s
	}()
	c, err := DialMux(ctx, ln.Addr().String(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := <-accepted
	if s == nil {
		t.FailNow()
	}
	t.Cleanup(func() { s.Close() })
	return c, s
}

// The channels are one ordered byte stream: a byte written on channel 1
// after a burst on channel 0 reaches its reader only once the whole burst
// has reached channel 0's buffer, though nothing reads channel 0. So
// every channel's bytes wait behind every byte sent before them, a lost
// segment's included (head-of-line blocking).
func TestTCPMuxOneOrderedStream(t *testing.T) {
	client, server := muxSessions(t, 2)
	const burst = 4 << 20
	go func() {
		if _, err := client.chans[0].Write(make([]byte, burst)); err != nil {
			t.Error(err)
		}
		if _, err := client.chans[1].Write([]byte("x")); err != nil {
			t.Error(err)
		}
	}()
	b := make([]byte, 1)
	_ = server.chans[1].SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(server.chans[1], b); err != nil {
		t.Fatal(err)
	}
	c := server.chans[0]
	c.mu.Lock()
	held := c.buffered
	c.mu.Unlock()
	if held != burst {
		t.Errorf("when channel 1's byte arrived, channel 0 held %d of the %d bytes written before it: the channels are not one ordered stream", held, burst)
	}
}

// A write that a full connection holds up in the middle of a frame ends
// at its deadline; the rest of that frame goes out before the next frame
// (another channel's here, written after it or already waiting), so the
// peer reads whole frames only, and exactly the bytes the write reported.
func TestTCPMuxDeadlineInsideAFrame(t *testing.T) {
	for _, waiting := range []bool{false, true} {
		t.Run(fmt.Sprintf("other channel waiting %v", waiting), func(t *testing.T) { testDeadlineInsideAFrame(t, waiting) })
	}
}

func testDeadlineInsideAFrame(t *testing.T, waiting bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan *net.TCPConn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
			peer <- nil
			return
		}
		_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
		peer <- c.(*net.TCPConn)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := DialMux(ctx, ln.Addr().String(), Options{Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	s, p := sess, <-peer
	if p == nil {
		t.FailNow()
	}
	defer p.Close()

	// The peer reads nothing, so the socket fills before the window does.
	var written int
	done := make(chan error, 1)
	go func() {
		for {
			n, err := s.chans[0].Write(make([]byte, 1<<20))
			written += n
			if err != nil {
				done <- err
				return
			}
		}
	}()
	for stalled := false; !stalled; {
		time.Sleep(100 * time.Millisecond)
		s.wmu.Lock()
		stalled = s.writer == s.chans[0]
		s.wmu.Unlock()
	}
	time.Sleep(200 * time.Millisecond)
	other := make(chan error, 1)
	if waiting {
		go func() {
			_, err := s.chans[1].Write([]byte("after"))
			other <- err
		}()
		time.Sleep(100 * time.Millisecond)
	}
	_ = s.chans[0].SetWriteDeadline(time.Unix(1, 0))
	if err := within(t, done, "the held-up write to end at its deadline"); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the held-up write ended with %v, want os.ErrDeadlineExceeded", err)
	}
	if written >= muxWindow {
		t.Fatalf("the write ended after %d bytes, past the window: want it held up by the socket", written)
	}
	if !waiting && len(s.pending) == 0 {
		t.Fatalf("the write ended after %d bytes with nothing of a frame pending: want a frame cut short", written)
	}

	got := make(chan map[int][]byte, 1)
	go func() {
		byChannel := map[int][]byte{}
		r := bufio.NewReader(p)
		buf := make([]byte, muxMaxPayload)
		if _, err := io.ReadFull(r, buf[:muxHelloLen]); err != nil || checkMuxHello(buf[:muxHelloLen], 2, muxModeSession) != nil {
			t.Errorf("the peer read no good hello: % x, %v", buf[:muxHelloLen], err)
		}
		for {
			f, payload, err := readMuxFrame(r, 2, buf)
			if err != nil {
				if err != io.EOF {
					t.Errorf("the peer read a bad stream: %v", err)
				}
				got <- byChannel
				return
			}
			if f.kind == muxData {
				byChannel[f.channel] = append(byChannel[f.channel], payload...)
			}
		}
	}()
	if !waiting {
		go func() {
			_, err := s.chans[1].Write([]byte("after"))
			other <- err
		}()
	}
	if err := within(t, other, "the write on channel 1"); err != nil {
		t.Fatalf("writing on channel 1: %v", err)
	}
	sess.Close()
	byChannel := within(t, got, "the peer to read to the end")
	if len(byChannel[0]) != written || !bytes.Equal(byChannel[1], []byte("after")) {
		t.Errorf("the peer read %d bytes on channel 0 (the write reported %d) and %q on channel 1", len(byChannel[0]), written, byChannel[1])
	}
}

// within waits 20 s at most for what, from ch.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("waited 20 s for %s", what)
		panic("unreachable")
	}
}

// A peer that sends more than a channel's window before any credit came
// back is refused: the session fails, saying so, rather than buffer it.
func TestTCPMuxRefusesPeerBeyondWindow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := ListenMux(ctx, "127.0.0.1:0", Options{Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		frame := make([]byte, muxHeaderLen+muxMaxPayload)
		putMuxHeader(frame, muxFrame{kind: muxData, length: muxMaxPayload})
		_, _ = c.Write(muxHello(1, muxModeSession))
		for range muxWindow/muxMaxPayload + 1 {
			if _, err := c.Write(frame); err != nil {
				return
			}
		}
		_, _ = io.Copy(io.Discard, c)
	}()
	s, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Nothing reads the channel, so no credit goes back.
	select {
	case <-s.failed:
	case <-time.After(20 * time.Second):
		t.Fatal("a peer that overran the window was not refused")
	}
	if err := s.failErr; !bytes.Contains([]byte(err.Error()), []byte("more than the 8388608-byte window on channel 0")) {
		t.Errorf("the session failed with %v, want it refused for overrunning the window", err)
	}
}
