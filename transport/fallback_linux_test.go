package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/sys/unix"
)

func fallbackOpts(t *testing.T) Options {
	t.Helper()
	o := options(t, ArmQUIC, 3)
	o.CongestionControl = "reno" // TCP only: must reach the TCP arm and not upset QUIC
	return o
}

// acceptOne accepts one session in the background.
func acceptOne(ctx context.Context, accept func(context.Context) (*Session, error)) <-chan acceptResult {
	ch := make(chan acceptResult, 1)
	go func() {
		s, err := accept(ctx)
		ch <- acceptResult{s, err}
	}()
	return ch
}

func TestFallbackUsesQUICWhenAvailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := fallbackOpts(t)
	ln, err := ListenFallback(ctx, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if q, tc := ln.QUICAddr().(*net.UDPAddr), ln.TCPAddr().(*net.TCPAddr); q.Port != tc.Port {
		t.Errorf("QUIC on port %d, TCP on %d: want the same number", q.Port, tc.Port)
	}
	acc := acceptOne(ctx, ln.Accept)

	var mu sync.Mutex
	var socks []udpSocket
	co := o
	co.Certificate = o.Certificate.ClientOnly()
	co.wrapUDP = func(s udpSocket) udpSocket {
		mu.Lock()
		socks = append(socks, s)
		mu.Unlock()
		return s
	}
	s, res, err := DialFallback(ctx, ln.QUICAddr().String(), ln.TCPAddr().String(), co, 5*time.Second)
	if err != nil {
		t.Fatalf("DialFallback: %v (result %+v)", err, res)
	}
	defer s.Close()
	if s.Arm() != ArmQUIC || res.Arm != ArmQUIC || res.QUICOutcome != QUICUsed || res.TCPTried {
		t.Errorf("QUIC available but session arm %s, result %+v", s.Arm(), res)
	}
	if res.Ready <= 0 || res.Ready > res.Elapsed || res.QUICEnded != res.Ready || res.GiveUp != 5*time.Second {
		t.Errorf("inconsistent timestamps: %+v", res)
	}
	r := <-acc
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.s.Close()
	if r.s.Arm() != ArmQUIC {
		t.Errorf("server accepted a %s session", r.s.Arm())
	}
	exchange(t, r.s, s, 100)

	// IP_RECVERR was on for the handshake and is off for the session.
	mu.Lock()
	defer mu.Unlock()
	if len(socks) != 1 {
		t.Fatalf("%d UDP sockets, want 1", len(socks))
	}
	if v := recvErr(t, socks[0]); v != 0 {
		t.Errorf("IP_RECVERR is %d on a live session's socket, want 0 (cleared after the handshake)", v)
	}
}

func recvErr(t *testing.T, s udpSocket) int {
	t.Helper()
	raw, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := raw.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVERR) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// Nothing listens on the UDP port: the kernel answers with ICMP port
// unreachable, which IP_RECVERR (IPV6_RECVERR on a v6 socket) turns into
// an immediate failure.
func TestFallbackOnClosedUDPPortIsFast(t *testing.T) {
	for _, c := range []struct {
		name, network string
		ip            net.IP
	}{
		{"ipv4", "udp4", net.IPv4(127, 0, 0, 1)},
		{"ipv6", "udp6", net.IPv6loopback},
	} {
		t.Run(c.name, func(t *testing.T) { closedUDPPortIsFast(t, c.network, c.ip) })
	}
}

func closedUDPPortIsFast(t *testing.T, network string, ip net.IP) {
	// A UDP port that was free a moment ago and is closed now.
	u, err := net.ListenUDP(network, &net.UDPAddr{IP: ip})
	if err != nil {
		if network == "udp6" {
			t.Skipf("no IPv6 loopback here: %v", err)
		}
		t.Fatal(err)
	}
	quicAddr := u.LocalAddr().String()
	u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := fallbackOpts(t)
	_, to, err := fallbackOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(ctx, ArmTCP, net.JoinHostPort(ip.String(), "0"), to)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := acceptOne(ctx, ln.Accept)

	giveUp := 5 * time.Second
	co := o
	co.Certificate = o.Certificate.ClientOnly()
	s, res, err := DialFallback(ctx, quicAddr, ln.Addr().String(), co, giveUp)
	if err != nil {
		t.Fatalf("DialFallback: %v (result %+v)", err, res)
	}
	defer s.Close()
	if res.QUICOutcome != QUICFailed || !strings.Contains(res.QUICError, "refused") {
		t.Errorf("QUIC outcome %q (%s), want %q with connection refused", res.QUICOutcome, res.QUICError, QUICFailed)
	}
	// Loose: a refused port is noticed in well under a millisecond on
	// loopback; anything near the give-up time means ICMP was ignored.
	if res.QUICEnded > giveUp/5 {
		t.Errorf("QUIC failure noticed after %v: the ICMP error was not seen", res.QUICEnded)
	}
	if !res.TCPTried || res.TCPStarted < res.QUICEnded || res.Arm != ArmTCP || s.Arm() != ArmTCP || res.Ready < res.TCPStarted {
		t.Errorf("fallback to TCP not recorded in order: %+v", res)
	}
	if got := s.State().CongestionControl; got != "reno" {
		t.Errorf("TCP fallback runs %q, want the reno asked for", got)
	}
	r := <-acc
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.s.Close()
	exchange(t, r.s, s, 100)
}

// UDP silently dropped: a socket that reads and discards, so the client
// hears nothing and must wait out the give-up time.
func TestFallbackAfterGiveUpWhenUDPIsSilent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := fallbackOpts(t)
	ln, err := ListenFallback(ctx, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := acceptOne(ctx, ln.Accept)
	hole, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	var swallowed atomic.Int64
	go func() {
		b := make([]byte, 2048)
		for {
			if _, _, err := hole.ReadFrom(b); err != nil {
				return
			}
			swallowed.Add(1)
		}
	}()

	giveUp := 300 * time.Millisecond
	co := o
	co.Certificate = o.Certificate.ClientOnly()
	s, res, err := DialFallback(ctx, hole.LocalAddr().String(), ln.TCPAddr().String(), co, giveUp)
	if err != nil {
		t.Fatalf("DialFallback: %v (result %+v)", err, res)
	}
	defer s.Close()
	if swallowed.Load() == 0 {
		t.Error("the client sent no QUIC packet to the silent port")
	}
	if res.QUICOutcome != QUICGaveUp || res.Arm != ArmTCP || s.Arm() != ArmTCP {
		t.Errorf("want give-up then TCP, got %+v", res)
	}
	if res.QUICEnded < giveUp || res.TCPStarted < giveUp || res.Ready < res.TCPStarted {
		t.Errorf("timestamps before the %v give-up: %+v", giveUp, res)
	}
	// Loose upper bound for a loaded machine: TCP on loopback is fast.
	if res.Ready > giveUp+2*time.Second || res.Elapsed < res.Ready {
		t.Errorf("ready at %v (elapsed %v) after a %v give-up", res.Ready, res.Elapsed, giveUp)
	}
	r := <-acc
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.s.Close()
	if r.s.Arm() != ArmTCP {
		t.Errorf("server accepted a %s session, want tcp", r.s.Arm())
	}
}

func TestFallbackCancelledDoesNotTryTCP(t *testing.T) {
	hole, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	o := fallbackOpts(t)
	// The TCP address is never dialled; port 9 (discard) would refuse.
	s, res, err := DialFallback(ctx, hole.LocalAddr().String(), "127.0.0.1:9", o, 5*time.Second)
	if err == nil {
		s.Close()
		t.Fatal("a cancelled dial returned a session")
	}
	if !errors.Is(err, context.DeadlineExceeded) || res.QUICOutcome != QUICCancelled || res.TCPTried {
		t.Errorf("err %v, result %+v: want cancellation during QUIC and no TCP", err, res)
	}
}

func TestFallbackRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	o := fallbackOpts(t)
	if _, _, err := DialFallback(ctx, "127.0.0.1:1", "127.0.0.1:1", o, -time.Second); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative give-up: err = %v", err)
	}
	bad := o
	bad.Channels = 0
	_, res, err := DialFallback(ctx, "127.0.0.1:1", "127.0.0.1:1", bad, 0)
	if err == nil || !strings.Contains(err.Error(), "Channels") {
		t.Errorf("zero channels: err = %v", err)
	}
	if res.QUICOutcome != "" || res.TCPTried {
		t.Errorf("bad options still dialled: %+v", res)
	}
	if _, err := ListenFallback(ctx, "127.0.0.1", o); err == nil {
		t.Error("an address without a port was accepted")
	}
	_, res, _ = DialFallback(ctx, "127.0.0.1:1", "127.0.0.1:1", bad, 0)
	if res.GiveUp != DefaultFallbackGiveUp {
		t.Errorf("zero give-up became %v, want DefaultFallbackGiveUp", res.GiveUp)
	}
}

// errSocket fails every send with err.
type errSocket struct {
	udpSocket
	err error
}

func (e errSocket) WriteMsgUDP(b, oob []byte, _ *net.UDPAddr) (int, int, error) { return 0, 0, e.err }
func (e errSocket) WriteTo(b []byte, _ net.Addr) (int, error)                   { return 0, e.err }
func (e errSocket) Write(b []byte) (int, error)                                 { return 0, e.err }

// A packet dropped on its way out of the host (ENOBUFS, reported only with
// IP_RECVERR) is loss, and must not end the handshake; other errors, such
// as the ICMP-reported ECONNREFUSED, still get through.
func TestQuietNoBufs(t *testing.T) {
	b := []byte("x")
	q := quietNoBufs{errSocket{err: &net.OpError{Op: "write", Err: os.NewSyscallError("sendmsg", unix.ENOBUFS)}}}
	if n, _, err := q.WriteMsgUDP(b, nil, nil); err != nil || n != 1 {
		t.Errorf("WriteMsgUDP with ENOBUFS: n=%d err=%v, want 1, nil", n, err)
	}
	if n, err := q.WriteTo(b, nil); err != nil || n != 1 {
		t.Errorf("WriteTo with ENOBUFS: n=%d err=%v", n, err)
	}
	if n, err := q.Write(b); err != nil || n != 1 {
		t.Errorf("Write with ENOBUFS: n=%d err=%v", n, err)
	}
	q = quietNoBufs{errSocket{err: unix.ECONNREFUSED}}
	if _, _, err := q.WriteMsgUDP(b, nil, nil); !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("ECONNREFUSED hidden: %v", err)
	}
	if _, err := q.WriteTo(b, nil); !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("ECONNREFUSED hidden by WriteTo: %v", err)
	}
}

// A bad incoming session is reported and the listener goes on; Close ends
// it with an error that is not about a session.
func TestFallbackListenerSurvivesABadSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := fallbackOpts(t)
	accepted := make(chan struct{}, 4)
	so := o
	so.quicAccepted = func() {
		select {
		case accepted <- struct{}{}:
		default:
		}
	}
	ln, err := ListenFallback(ctx, "127.0.0.1:0", so)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A TCP peer that closes after half a header.
	c, err := net.Dial("tcp", ln.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte{1, 2, 3})
	c.Close()
	_, err = ln.Accept(ctx)
	var ce *ChannelError
	if !errors.As(err, &ce) {
		t.Fatalf("bad TCP session: Accept err = %v, want a *ChannelError", err)
	}
	// A QUIC peer that closes before opening a stream: quic-go's error
	// for that matches net.ErrClosed, and must not stop the listener.
	tlsConf, err := o.Certificate.clientTLS()
	if err != nil {
		t.Fatal(err)
	}
	qc, err := quic.DialAddr(ctx, ln.QUICAddr().String(), tlsConf, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Close only once quic-go has handed the connection to the listener:
	// quic-go drops, without a word, a connection whose peer has closed
	// before it is queued for Accept (its handshake-complete and
	// connection-closed cases race), and then there is no error to see.
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("quic-go never handed the listener the QUIC peer's connection")
	}
	_ = qc.CloseWithError(0, "bye")
	_, err = ln.Accept(ctx)
	if !errors.As(err, &ce) || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("QUIC peer that left: Accept err = %v, want a *ChannelError matching net.ErrClosed", err)
	}
	acc := acceptOne(ctx, ln.Accept)
	co := o
	co.Certificate = o.Certificate.ClientOnly()
	s, res, err := DialFallback(ctx, ln.QUICAddr().String(), ln.TCPAddr().String(), co, 5*time.Second)
	if err != nil {
		t.Fatalf("DialFallback after a bad session: %v (%+v)", err, res)
	}
	defer s.Close()
	r := <-acc
	if r.err != nil {
		t.Fatalf("Accept after a bad session: %v", r.err)
	}
	r.s.Close()
	ln.Close()
	_, err = ln.Accept(ctx)
	if !errors.Is(err, net.ErrClosed) || errors.As(err, &ce) {
		t.Errorf("after Close: Accept err = %v, want net.ErrClosed and no *ChannelError", err)
	}
}
