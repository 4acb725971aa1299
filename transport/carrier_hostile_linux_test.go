package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var testCarrierSecret = []byte("a carrier secret for tests only")

// acceptOne returns the next channel, or the next error when wantErr.
func acceptNext(t *testing.T, ln *CarrierListener, within time.Duration) (CarrierChannel, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return ln.Accept(ctx)
}

// rawCarrierConn connects to addr from local (an address on loopback, or
// "" for any) and writes hdr, as a hostile or hand-made client would.
func rawCarrierConn(t *testing.T, addr, local string, hdr []byte) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if hdr != nil {
		if _, err := c.Write(hdr); err != nil {
			t.Fatal(err)
		}
	}
	return c.(*net.TCPConn)
}

func header(t *testing.T, id uint64, index int, secret []byte) []byte {
	t.Helper()
	b, err := carrierHeader(id, index, secret)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// closedByPeer waits up to within for c to be closed by the other end.
func closedByPeer(c net.Conn, within time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// flakyListener fails Accept with err while failing is set, counting the
// calls.
type flakyListener struct {
	net.Listener
	err     error
	failing atomic.Bool
	calls   atomic.Int64
}

func (f *flakyListener) Accept() (net.Conn, error) {
	if f.failing.Load() {
		f.calls.Add(1)
		return nil, f.err
	}
	return f.Listener.Accept()
}

func flakyCarrierListener(t *testing.T, err error) (*CarrierListener, *flakyListener) {
	t.Helper()
	fl := &flakyListener{err: err}
	fl.failing.Store(true)
	o := Options{Listen: func(ctx context.Context, network, address string) (net.Listener, error) {
		ln, err := (&net.ListenConfig{}).Listen(ctx, network, address)
		fl.Listener = ln
		return fl, err
	}}
	ln, lerr := ListenCarrier(context.Background(), ArmTCP, "127.0.0.1:0", o)
	if lerr != nil {
		t.Fatal(lerr)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, fl
}

// Out of file descriptors, the listener backs off and goes on listening
// (it used to close, dropping every channel), and says so once.
func TestCarrierListenerBacksOffWhenOutOfDescriptors(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: &osSyscallError{syscall.EMFILE}}
	ln, fl := flakyCarrierListener(t, emfile)
	_, err := acceptNext(t, ln, 5*time.Second)
	var ce *ChannelError
	if !errors.As(err, &ce) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("Accept while accepting fails with EMFILE: %v, want a *ChannelError saying so", err)
	}
	time.Sleep(300 * time.Millisecond)
	fl.failing.Store(false)
	// 5 ms doubling: 8 tries in 300 ms at most, where a loop without a
	// pause makes thousands.
	if n := fl.calls.Load(); n > 20 {
		t.Errorf("%d accepts in 300 ms of EMFILE: it does not back off", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialCarrier(ctx, ArmTCP, ln.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		ch, err := ln.Accept(ctx)
		if errors.As(err, &ce) {
			continue // a second episode's report, if the pause came in two
		}
		if err != nil {
			t.Fatalf("after EMFILE passed: %v, want the channel", err)
		}
		ch.Close()
		break
	}
}

// osSyscallError is an *os.SyscallError's shape without importing os for
// it: what net wraps an accept's errno in.
type osSyscallError struct{ errno syscall.Errno }

func (e *osSyscallError) Error() string { return "accept4: " + e.errno.Error() }
func (e *osSyscallError) Unwrap() error { return e.errno }

// A listening socket that fails for good ends Accept with net.ErrClosed,
// never with a *ChannelError, which would tell the caller to go on
// calling Accept (a tunnel's Serve spun on it).
func TestCarrierListenerFailureIsNotAChannelError(t *testing.T) {
	ln, _ := flakyCarrierListener(t, errors.New("the socket is gone"))
	_, err := acceptNext(t, ln, 5*time.Second)
	var ce *ChannelError
	if errors.As(err, &ce) || !errors.Is(err, net.ErrClosed) || !errors.Is(err, ErrCarrierListenerFailed) ||
		!strings.Contains(err.Error(), "the socket is gone") {
		t.Fatalf("Accept after the socket failed: %v (a *ChannelError: %v); want ErrCarrierListenerFailed and net.ErrClosed, with the cause",
			err, errors.As(err, &ce))
	}
	if _, err := acceptNext(t, ln, time.Second); !errors.Is(err, ErrCarrierListenerFailed) {
		t.Errorf("a second Accept: %v", err)
	}
}

// Channels held are bounded per peer and in all; a closed channel makes
// room again.
func TestCarrierListenerBoundsChannels(t *testing.T) {
	for _, arm := range []Arm{ArmTCP, ArmQUIC} {
		t.Run(string(arm), func(t *testing.T) {
			o := options(t, arm, 0)
			o.CarrierPeerLimit, o.CarrierLimit = 3, 5
			ln, err := ListenCarrier(context.Background(), arm, "127.0.0.1:0", o)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			dial := func(local string) *Carrier {
				co := o
				co.Certificate = o.Certificate.ClientOnly()
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
				co.DialContext = d.DialContext
				co.ListenPacket = func(ctx context.Context, network, _ string) (net.PacketConn, error) {
					return (&net.ListenConfig{}).ListenPacket(ctx, network, local+":0")
				}
				c, err := DialCarrier(ctx, arm, ln.Addr().String(), co)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			open := func(c *Carrier) (CarrierChannel, error) {
				t.Helper()
				if _, err := c.Open(ctx); err != nil {
					t.Fatal(err)
				}
				return acceptNext(t, ln, 10*time.Second)
			}
			a, b := dial("127.0.0.1"), dial("127.0.0.2")
			var held []CarrierChannel
			for i := range 3 {
				ch, err := open(a)
				if err != nil {
					t.Fatalf("channel %d from a peer below its bound: %v", i, err)
				}
				held = append(held, ch)
			}
			if _, err := open(a); err == nil || !strings.Contains(err.Error(), "CarrierPeerLimit") {
				t.Fatalf("a fourth channel from one peer, bound 3: %v", err)
			}
			for i := range 2 {
				ch, err := open(b)
				if err != nil {
					t.Fatalf("channel %d from a second peer: %v", i, err)
				}
				held = append(held, ch)
			}
			if _, err := open(b); err == nil || !strings.Contains(err.Error(), "CarrierLimit") {
				t.Fatalf("a sixth channel, bound 5 in all: %v", err)
			}
			held[0].Close()
			if ch, err := open(a); err != nil {
				t.Errorf("after a channel closed: %v", err)
			} else {
				ch.Close()
			}
		})
	}
}

// Connections that send no header are bounded per peer: the one that has
// waited longest gives way, so a peer holding idle connections blocks
// neither another peer nor, for long, itself.
func TestCarrierListenerDisplacesIdleConnections(t *testing.T) {
	ln, err := ListenCarrier(context.Background(), ArmTCP, "127.0.0.1:0",
		Options{CarrierPeerLimit: 2, CarrierLimit: 4, HandshakeTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var idle []*net.TCPConn
	for range 10 {
		idle = append(idle, rawCarrierConn(t, ln.Addr().String(), "127.0.0.1", nil))
	}
	var closed sync.WaitGroup
	var n atomic.Int64
	for _, c := range idle[:8] {
		closed.Go(func() {
			if closedByPeer(c, 10*time.Second) {
				n.Add(1)
			}
		})
	}
	closed.Wait()
	if n.Load() != 8 {
		t.Errorf("%d of the 8 oldest idle connections were closed, with 2 allowed to wait; want all", n.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialCarrier(ctx, ArmTCP, ln.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		ch, err := ln.Accept(ctx)
		var ce *ChannelError
		if errors.As(err, &ce) && strings.Contains(err.Error(), "displaced") {
			continue
		}
		if err != nil {
			t.Fatalf("a carrier's channel behind idle connections: %v", err)
		}
		ch.Close()
		break
	}
}

// With a secret, a channel needs the proof: none, a wrong one, a replayed
// header and one far off in time are refused, on every arm.
func TestCarrierListenerNeedsTheSecret(t *testing.T) {
	for _, arm := range carrierArms {
		t.Run(string(arm), func(t *testing.T) {
			o := options(t, arm, 0)
			o.CarrierSecret = testCarrierSecret
			ln, err := ListenCarrier(context.Background(), arm, "127.0.0.1:0", o)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			try := func(secret []byte) (CarrierChannel, error) {
				co := o
				co.Certificate = o.Certificate.ClientOnly()
				co.CarrierSecret = secret
				c, err := DialCarrier(ctx, arm, ln.Addr().String(), co)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				if _, err := c.Open(ctx); err != nil {
					t.Fatal(err)
				}
				return acceptNext(t, ln, 10*time.Second)
			}
			if _, err := try(nil); err == nil || !strings.Contains(err.Error(), "no proof") {
				t.Errorf("a client without the secret: %v", err)
			}
			if _, err := try([]byte("not the secret, but as long")); err == nil || !strings.Contains(err.Error(), "wrong proof") {
				t.Errorf("a client with another secret: %v", err)
			}
			ch, err := try(testCarrierSecret)
			if err != nil {
				t.Fatalf("a client with the secret: %v", err)
			}
			ch.Close()
		})
	}
	ln, err := ListenCarrier(context.Background(), ArmTCP, "127.0.0.1:0", Options{CarrierSecret: testCarrierSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hdr := header(t, 7, 0, testCarrierSecret)
	rawCarrierConn(t, ln.Addr().String(), "", hdr)
	first, err := acceptNext(t, ln, 10*time.Second)
	if err != nil {
		t.Fatalf("a hand-made header with the proof: %v", err)
	}
	first.Close() // so the replay is not refused as a duplicate
	rawCarrierConn(t, ln.Addr().String(), "", hdr)
	if _, err := acceptNext(t, ln, 10*time.Second); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Errorf("the same header again: %v", err)
	}
	old := header(t, 7, 1, nil)
	binary.BigEndian.PutUint64(old[14:], uint64(time.Now().Add(-2*CarrierClockSkew).UnixNano()))
	copy(old[carrierProofAt:], carrierProof(testCarrierSecret, old[:carrierProofAt]))
	rawCarrierConn(t, ln.Addr().String(), "", old)
	if _, err := acceptNext(t, ln, 10*time.Second); err == nil || !strings.Contains(err.Error(), "clocks must agree") {
		t.Errorf("a header from 10 minutes ago: %v", err)
	}
	if _, err := DialCarrier(context.Background(), ArmTCP, "127.0.0.1:1", Options{CarrierSecret: []byte("short")}); err == nil ||
		!strings.Contains(err.Error(), "at least") {
		t.Errorf("a 5-byte secret: %v", err)
	}
}

// Both ends name the channel's carrier; a second channel with an open
// channel's carrier id and index is refused, and allowed once it closed.
func TestCarrierChannelsNameTheirCarrier(t *testing.T) {
	ln, c := carrierPair(t, ArmTCP)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Carrier() != c.ID() || sc.Carrier() != c.ID() {
		t.Errorf("carrier ids: client %x, its channel %x, the server's channel %x", c.ID(), ch.Carrier(), sc.Carrier())
	}
	rawCarrierConn(t, ln.Addr().String(), "", header(t, c.ID(), 0, nil))
	if _, err := ln.Accept(ctx); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Fatalf("a second channel 0 of the same carrier: %v", err)
	}
	other := rawCarrierConn(t, ln.Addr().String(), "", header(t, c.ID()+1, 0, nil))
	if oc, err := ln.Accept(ctx); err != nil || oc.Carrier() != c.ID()+1 || oc.Index() != 0 {
		t.Errorf("channel 0 of another carrier: %v", err)
	} else {
		oc.Close()
	}
	other.Close()
	sc.Close()
	rawCarrierConn(t, ln.Addr().String(), "", header(t, c.ID(), 0, nil))
	if again, err := ln.Accept(ctx); err != nil {
		t.Errorf("channel 0 again once the first closed: %v", err)
	} else {
		again.Close()
	}
}

// What the listener keeps stays bounded however many connections come
// and go: refused ones leave nothing, ended channels leave their state in
// a list of at most maxEndedListed.
func TestCarrierListenerForgetsWhatEnded(t *testing.T) {
	for _, arm := range []Arm{ArmTCP, ArmQUICPerChannel} {
		t.Run(string(arm), func(t *testing.T) {
			const n = maxEndedListed + 36
			o := options(t, arm, 0)
			if arm == ArmQUICPerChannel {
				// Each channel's connection stays a while after it; the
				// listener ends them, not the client.
				o.IdleTimeout, o.KeepAlive, o.CarrierPeerLimit = 500*time.Millisecond, 100*time.Millisecond, 2*n
			}
			ln, err := ListenCarrier(context.Background(), arm, "127.0.0.1:0", o)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			co := o
			co.Certificate = o.Certificate.ClientOnly()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := DialCarrier(ctx, arm, ln.Addr().String(), co)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := range n {
				ch, err := c.Open(ctx)
				if err != nil {
					t.Fatal(err)
				}
				sc, err := ln.Accept(ctx)
				if err != nil {
					t.Fatal(err)
				}
				sc.Close()
				ch.Close()
				if arm == ArmTCP {
					rawCarrierConn(t, ln.Addr().String(), "", []byte("not a header at all, and longer than one")).Close()
					if _, err := ln.Accept(ctx); err == nil {
						t.Fatalf("garbage %d accepted", i)
					}
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			var conns, tcp, quic, live, held, qconns, waiting int
			for time.Now().Before(deadline) {
				ln.mu.Lock()
				conns, tcp, quic, live = len(ln.conns), len(ln.tcp), len(ln.quic), len(ln.live)
				held, qconns, waiting = ln.held.total+len(ln.held.by), ln.qconns.total+len(ln.qconns.by), ln.waiting.n+len(ln.waiting.peers)
				ln.mu.Unlock()
				if conns+tcp+quic+live+held+qconns+waiting == 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if conns+tcp+quic+live+held+qconns+waiting != 0 {
				t.Errorf("after %d channels and their connections ended the listener still holds: %d closers, %d tcp, %d quic, "+
					"%d live keys, %d held, %d quic counts, %d waiting", n, conns, tcp, quic, live, held, qconns, waiting)
			}
			st := ln.State()
			if got := len(st.TCP) + len(st.QUIC); got != maxEndedListed || st.UnlistedConnections != n-maxEndedListed {
				t.Errorf("State lists %d connections and %d unlisted; want the last %d and %d", got, st.UnlistedConnections, maxEndedListed, n-maxEndedListed)
			}
			if st.Channels != n {
				t.Errorf("State counts %d channels, want %d", st.Channels, n)
			}
		})
	}
}
