package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// testCert is made once per test binary run; making it is cheap but there is
// no reason to repeat it.
var testCert = sync.OnceValues(func() (Certificate, error) { return NewCertificate("127.0.0.1") })

func options(t testing.TB, arm Arm, n int) Options {
	t.Helper()
	o := Options{Channels: n}
	if arm.IsQUIC() {
		c, err := testCert()
		if err != nil {
			t.Fatal(err)
		}
		o.Certificate = c
	}
	return o
}

// pair opens a session of the given arm on loopback and returns both ends.
func pair(t testing.TB, arm Arm, so, co Options) (server, client *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := Listen(context.Background(), arm, "127.0.0.1:0", so)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	type res struct {
		s   *Session
		err error
	}
	acc := make(chan res, 1)
	go func() {
		s, err := ln.Accept(ctx)
		acc <- res{s, err}
	}()
	client, err = Dial(ctx, arm, ln.Addr().String(), co)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	r := <-acc
	if r.err != nil {
		t.Fatalf("Accept: %v", r.err)
	}
	t.Cleanup(func() { _ = r.s.Close() })
	return r.s, client
}

// exchangeLimit bounds each of exchange's reads and writes: a guard
// against a hang, not a rate.
const exchangeLimit = time.Minute

// exchange sends a distinct message each way on every channel, concurrently,
// and checks that each end got the message meant for that channel index.
func exchange(t testing.TB, server, client *Session, size int) {
	t.Helper()
	msg := func(dir string, i int) []byte {
		prefix := fmt.Sprintf("%s channel %d|", dir, i)
		b := bytes.Repeat([]byte{byte('a' + i)}, size)
		return append([]byte(prefix), b...)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(client.channels))
	for i := range client.channels {
		cc, sc := client.Channel(i), server.Channel(i)
		if cc.Index() != i || sc.Index() != i {
			t.Fatalf("channel %d: Index() = %d (client), %d (server)", i, cc.Index(), sc.Index())
		}
		for _, dir := range []struct {
			name string
			w, r Channel
		}{{"c2s", cc, sc}, {"s2c", sc, cc}} {
			want := msg(dir.name, i)
			wg.Go(func() {
				_ = dir.w.SetWriteDeadline(time.Now().Add(exchangeLimit))
				if _, err := dir.w.Write(want); err != nil {
					errs <- fmt.Errorf("%s channel %d write: %v", dir.name, i, err)
				}
			})
			wg.Go(func() {
				_ = dir.r.SetReadDeadline(time.Now().Add(exchangeLimit))
				got := make([]byte, len(want))
				if _, err := io.ReadFull(dir.r, got); err != nil {
					errs <- fmt.Errorf("%s channel %d read: %v", dir.name, i, err)
					return
				}
				if !bytes.Equal(got, want) {
					head := got[:min(len(got), 24)]
					errs <- fmt.Errorf("%s channel %d got %q..., want %q...", dir.name, i, head, want[:24])
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestArmsCarryDataBothWays(t *testing.T) {
	for _, arm := range arms() {
		t.Run(string(arm), func(t *testing.T) {
			server, client := pair(t, arm, options(t, arm, 5), options(t, arm, 5))
			if len(server.Channels()) != 5 || len(client.Channels()) != 5 {
				t.Fatalf("channels: server %d, client %d; want 5", len(server.Channels()), len(client.Channels()))
			}
			exchange(t, server, client, 200<<10)
			if client.ConnectTime() <= 0 {
				t.Errorf("client ConnectTime = %v, want > 0", client.ConnectTime())
			}
			if server.ConnectTime() != 0 {
				t.Errorf("server ConnectTime = %v, want 0", server.ConnectTime())
			}
			// Half-close: the peer reads EOF after the data.
			if err := client.Channel(2).CloseWrite(); err != nil {
				t.Fatalf("CloseWrite: %v", err)
			}
			_ = server.Channel(2).SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := server.Channel(2).Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("after CloseWrite the server read %d, %v; want 0, EOF", n, err)
			}
			st := client.State()
			if _, err := json.Marshal(st); err != nil {
				t.Fatalf("State is not JSON-serialisable: %v", err)
			}
			if st.Arm != arm || st.Role != "client" || st.Channels != 5 {
				t.Errorf("State header = %s/%s/%d", st.Arm, st.Role, st.Channels)
			}
			switch arm {
			case ArmTCP:
				if len(st.TCP) != 5 || len(st.QUIC) != 0 {
					t.Errorf("State has %d TCP and %d QUIC connections, want 5 and 0", len(st.TCP), len(st.QUIC))
				}
			case ArmQUIC:
				if len(st.QUIC) != 1 || len(st.QUIC[0].Channels) != 5 {
					t.Errorf("State has %d QUIC connections, want 1 carrying 5 channels: %+v", len(st.QUIC), st.QUIC)
				}
			case ArmQUICPerChannel:
				if len(st.QUIC) != 5 {
					t.Errorf("State has %d QUIC connections, want 5", len(st.QUIC))
				}
				for i, q := range st.QUIC {
					if len(q.Channels) != 1 || q.Channels[0] != i {
						t.Errorf("connection %d carries channels %v, want [%d]", i, q.Channels, i)
					}
				}
			}
		})
	}
}

// TestChannelOrderFromHeadersNotArrival opens the channels in reverse order
// and checks the server still numbers them by their headers.
func TestChannelOrderFromHeadersNotArrival(t *testing.T) {
	const n = 5
	t.Run("tcp", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		o := options(t, ArmTCP, n)
		ln, err := Listen(ctx, ArmTCP, "127.0.0.1:0", o)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		sid, _ := newSessionID()
		for i := n - 1; i >= 0; i-- {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			hdr := channelHeader{session: sid, index: i, count: n}.marshal()
			if _, err := c.Write(append(hdr, byte(i))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // make the arrival order the reverse one
		}
		s, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkFirstBytes(t, s, n)
	})
	t.Run("quic", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		o, _ := options(t, ArmQUIC, n).validate(ArmQUIC)
		ln, err := Listen(ctx, ArmQUIC, "127.0.0.1:0", o)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		tlsConf, err := o.Certificate.clientTLS()
		if err != nil {
			t.Fatal(err)
		}
		ep, err := newUDPEndpoint(ctx, "udp4", "", o)
		if err != nil {
			t.Fatal(err)
		}
		qc, closers, err := dialQUICConn(ctx, ArmQUIC, -1, ep, ln.Addr().(*net.UDPAddr), tlsConf, o, time.Now())
		defer func() {
			for _, f := range closers {
				_ = f()
			}
		}()
		if err != nil {
			t.Fatal(err)
		}
		sid, _ := newSessionID()
		for i := n - 1; i >= 0; i-- {
			st, err := openChannelStream(ctx, ArmQUIC, qc.conn, i, sid, o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Write([]byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		s, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkFirstBytes(t, s, n)
	})
}

func checkFirstBytes(t *testing.T, s *Session, n int) {
	t.Helper()
	for i := range n {
		c := s.Channel(i)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatalf("channel %d: %v", i, err)
		}
		if int(b[0]) != i {
			t.Errorf("server channel %d carries the client's channel %d", i, b[0])
		}
	}
}

// segmentSpy sits between quic-go (or the wrapper) and the kernel and counts
// writes that ask for UDP segmentation offload.
type segmentSpy struct {
	udpSocket
	writes, segmented *atomic.Int64
}

func (s *segmentSpy) WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (int, int, error) {
	s.writes.Add(1)
	if hasUDPSegment(oob) {
		s.segmented.Add(1)
	}
	return s.udpSocket.WriteMsgUDP(b, oob, addr)
}

func kernelHasUDPGSO(t *testing.T) bool {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	_, err = unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	return err == nil
}

// TestGSOWrapper checks that the wrapper keeps quic-go from segmenting, by
// what quic-go reports and by what reaches the socket, against a positive
// control without the wrapper that shows GSO in use on this kernel.
func TestGSOWrapper(t *testing.T) {
	if os.Getenv("QUIC_GO_DISABLE_GSO") != "" {
		t.Skip("QUIC_GO_DISABLE_GSO is set: the positive control cannot show GSO")
	}
	hasGSO := kernelHasUDPGSO(t)
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("AllowGSO=%v", allow), func(t *testing.T) {
			if allow && !hasGSO {
				t.Skip("this kernel refuses UDP_SEGMENT, so there is no GSO to control for")
			}
			var writes, segmented atomic.Int64
			spy := func(s udpSocket) udpSocket { return &segmentSpy{udpSocket: s, writes: &writes, segmented: &segmented} }
			so, co := options(t, ArmQUIC, 2), options(t, ArmQUIC, 2)
			so.AllowGSO, co.AllowGSO = allow, allow
			so.wrapUDP, co.wrapUDP = spy, spy
			server, client := pair(t, ArmQUIC, so, co)
			// Bulk both ways so that quic-go has many full packets to send.
			exchange(t, server, client, 4<<20)
			for _, s := range []*Session{server, client} {
				st := s.State()
				q := st.QUIC[0]
				if q.GSO != allow {
					t.Errorf("%s: ConnectionState().GSO = %v with AllowGSO=%v", st.Role, q.GSO, allow)
				}
				if q.Socket.GSOWrapper == allow {
					t.Errorf("%s: Socket.GSOWrapper = %v with AllowGSO=%v", st.Role, q.Socket.GSOWrapper, allow)
				}
				if !q.Socket.ECNReceive {
					t.Errorf("%s: ECN reception is off on the UDP socket", st.Role)
				}
				// ECN validated end to end: marks sent, received through the
				// wrapper's batched reads, and echoed in ACKs.
				if q.ECNState != "capable" {
					t.Errorf("%s: ECN state %q, want capable", st.Role, q.ECNState)
				}
				if allow {
					continue
				}
				if q.MaxShortHeaderPacket > DatagramSize || q.OversizePackets != 0 {
					t.Errorf("%s: largest packet %d bytes, %d over %d", st.Role, q.MaxShortHeaderPacket, q.OversizePackets, DatagramSize)
				}
			}
			t.Logf("AllowGSO=%v: %d writes, %d with UDP_SEGMENT", allow, writes.Load(), segmented.Load())
			if writes.Load() == 0 {
				t.Fatal("the spy saw no writes: it is not in the path")
			}
			if allow && segmented.Load() == 0 {
				t.Error("positive control: no write carried UDP_SEGMENT although quic-go was allowed GSO")
			}
			if !allow && segmented.Load() != 0 {
				t.Errorf("%d writes carried UDP_SEGMENT with the wrapper on", segmented.Load())
			}
		})
	}
}

func TestWrapperRefusesSegmentedWrite(t *testing.T) {
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := newGSOOffConn(pc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	oob := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.IPPROTO_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	if _, _, err := w.WriteMsgUDP(make([]byte, 2800), oob, pc.LocalAddr().(*net.UDPAddr)); !errors.Is(err, errGSOLeak) {
		t.Errorf("segmented write: err = %v, want errGSOLeak", err)
	}
	if _, _, err := w.WriteMsgUDP([]byte("x"), nil, pc.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Errorf("plain write: %v", err)
	}
	// The control handle quic-go sees must not admit UDP_SEGMENT.
	rc, _ := w.SyscallConn()
	var probe error
	_ = rc.Control(func(fd uintptr) { _, probe = unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT) })
	if probe == nil {
		t.Error("the wrapper's SyscallConn answers the UDP_SEGMENT probe")
	}
}

func TestUnavailableCongestionControlRefused(t *testing.T) {
	o := options(t, ArmTCP, 1)
	o.CongestionControl = "no-such-cc"
	_, err := Listen(context.Background(), ArmTCP, "127.0.0.1:0", o)
	if err == nil || !strings.Contains(err.Error(), "not available") || !strings.Contains(err.Error(), "modprobe") {
		t.Errorf("Listen with an unavailable controller: err = %v", err)
	}
	_, err = Dial(context.Background(), ArmTCP, "127.0.0.1:1", o)
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("Dial with an unavailable controller: err = %v", err)
	}
	avail, err := AvailableCongestionControl()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(err2s(CheckCongestionControl("no-such-cc")), strings.Join(avail, " ")) {
		t.Errorf("the error does not list the available controllers %v", avail)
	}
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCongestionControlPinnedAndReadBack pins a controller other than the
// host default and checks both ends read it back on every socket.
func TestCongestionControlPinnedAndReadBack(t *testing.T) {
	avail, err := AvailableCongestionControl()
	if err != nil {
		t.Fatal(err)
	}
	def, err := HostCongestionControl()
	if err != nil {
		t.Fatal(err)
	}
	var pick string
	for _, a := range avail {
		if a != def {
			pick = a
			break
		}
	}
	if pick == "" {
		t.Skipf("only the default controller %q is available", def)
	}
	o := options(t, ArmTCP, 3)
	o.CongestionControl = pick
	o.NotSentLowat = 16384
	server, client := pair(t, ArmTCP, o, o)
	exchange(t, server, client, 1000)
	for _, s := range []*Session{server, client} {
		st := s.State()
		if st.CongestionControl != pick || st.HostCongestionControl != def {
			t.Errorf("%s: congestion control %q (host %q), want %q (host %q)", st.Role, st.CongestionControl, st.HostCongestionControl, pick, def)
		}
		for _, c := range st.TCP {
			if c.Options.CongestionControl != pick || c.Info.Algorithm != pick || !c.Options.NoDelay || c.Options.NotSentLowat != 16384 {
				t.Errorf("%s channel %d: options %+v, TCP_INFO algorithm %q", st.Role, c.Channel, c.Options, c.Info.Algorithm)
			}
		}
	}
}

// The TCP_INFO series starts when the session does, before the caller
// can write: with an interval longer than the test, each connection has
// that one sample, taken before the megabyte was sent. (Taken only by the
// sampling goroutine, a first sample could come after the first loss on a
// loaded machine, and read as the initial window.)
func TestTCPSeriesStartsBeforeData(t *testing.T) {
	o := options(t, ArmTCP, 2)
	o.TCPInfoInterval = time.Hour
	server, client := pair(t, ArmTCP, o, o)
	exchange(t, server, client, 1<<20)
	for _, s := range []*Session{server, client} {
		st := s.State()
		for _, c := range st.TCP {
			if len(c.Series) != 1 {
				t.Fatalf("%s channel %d: %d samples in the series, want the one taken at the start", st.Role, c.Channel, len(c.Series))
			}
			if f := c.Series[0]; f.BytesSent >= 1<<20 || f.CwndSegments == 0 {
				t.Errorf("%s channel %d: the first sample had %d bytes sent and a window of %d segments, want it before the exchange",
					st.Role, c.Channel, f.BytesSent, f.CwndSegments)
			}
		}
	}
}

func TestStatsPopulated(t *testing.T) {
	t.Run("tcp", func(t *testing.T) {
		o := options(t, ArmTCP, 2)
		o.TCPInfoInterval = 5 * time.Millisecond
		server, client := pair(t, ArmTCP, o, o)
		exchange(t, server, client, 1<<20)
		time.Sleep(20 * time.Millisecond) // a few periodic samples
		populated := func(c TCPConnState) bool {
			i := c.Info
			return c.InfoError == "" && i.Algorithm != "" && i.CwndSegments != 0 && i.SRTT > 0 && i.BytesAcked >= 1<<20 && i.BytesReceived >= 1<<20 && i.MSS != 0 && i.DeliveryRate != 0 && i.SndWnd != 0 && i.RcvWnd != 0
		}
		// The last acknowledgement can still be in flight when exchange
		// returns (more so on a loaded machine): wait for it, up to 2 s.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			all := true
			for _, s := range []*Session{server, client} {
				for _, c := range s.State().TCP {
					all = all && populated(c)
				}
			}
			if all {
				break
			}
		}
		for _, s := range []*Session{server, client} {
			st := s.State()
			for _, c := range st.TCP {
				if !populated(c) {
					t.Errorf("%s channel %d: TCP_INFO not populated: %+v (err %q)", st.Role, c.Channel, c.Info, c.InfoError)
				}
				if len(c.Series) == 0 {
					t.Errorf("%s channel %d: no periodic TCP_INFO samples", st.Role, c.Channel)
				}
			}
		}
	})
	t.Run("quic", func(t *testing.T) {
		o := options(t, ArmQUIC, 2)
		o.QlogDir = t.TempDir()
		o.MetricsInterval = time.Millisecond
		server, client := pair(t, ArmQUIC, o, o)
		exchange(t, server, client, 1<<20)
		for _, s := range []*Session{server, client} {
			st := s.State()
			if st.CongestionControl != QUICCongestionControl {
				t.Errorf("%s: congestion control %q", st.Role, st.CongestionControl)
			}
			q := st.QUIC[0]
			if q.Stats.PacketsSent == 0 || q.Stats.BytesReceived < 1<<20 || q.Stats.SmoothedRTT <= 0 || q.Stats.CongestionWindow == 0 {
				t.Errorf("%s: ConnectionStats not populated: %+v", st.Role, q.Stats)
			}
			if len(q.Metrics) == 0 || q.Metrics[len(q.Metrics)-1].CongestionWindow == 0 {
				t.Errorf("%s: no congestion window series from qlog (%d samples)", st.Role, len(q.Metrics))
			}
			if q.ALPN != ALPN || q.TLSVersion != "TLS 1.3" {
				t.Errorf("%s: ALPN %q, TLS %q", st.Role, q.ALPN, q.TLSVersion)
			}
			if q.LocalParameters == nil || q.PeerParameters == nil {
				t.Fatalf("%s: transport parameters not recorded", st.Role)
			}
			if q.LocalParameters.InitialMaxData != ConnectionReceiveWindow || q.LocalParameters.InitialMaxStreamDataBidiRemote != StreamReceiveWindow ||
				q.PeerParameters.InitialMaxData != ConnectionReceiveWindow {
				t.Errorf("%s: windows in force: local %+v, peer %+v", st.Role, *q.LocalParameters, *q.PeerParameters)
			}
			// A megabyte of stream data must have filled full-size packets.
			if q.MaxShortHeaderPacket != DatagramSize {
				t.Errorf("%s: largest 1-RTT packet %d bytes, want %d", st.Role, q.MaxShortHeaderPacket, DatagramSize)
			}
			if q.QlogFile == "" {
				t.Errorf("%s: no qlog file (%s)", st.Role, q.QlogError)
			}
		}
		_ = server.Close()
		_ = client.Close()
		// quic-go closes the qlog trace when the connection is gone.
		deadline := time.Now().Add(5 * time.Second)
		for {
			files, _ := filepath.Glob(filepath.Join(o.QlogDir, "*.sqlog"))
			ok := len(files) == 2
			for _, f := range files {
				b, _ := os.ReadFile(f)
				ok = ok && len(b) > 1000 && b[0] == 0x1e && bytes.Contains(b, []byte("recovery:metrics_updated"))
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("qlog files %v not complete", files)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func TestPriorityRecorded(t *testing.T) {
	o := options(t, ArmQUIC, 3)
	o.Priority, o.PriorityChannel = true, 1
	server, client := pair(t, ArmQUIC, o, o)
	exchange(t, server, client, 100)
	for _, s := range []*Session{server, client} {
		p := s.State().Priority
		if p == nil || p.Channel != 1 || p.Urgency != priorityUrgency {
			t.Errorf("priority not recorded: %+v", p)
		}
	}
	plain, _ := pair(t, ArmQUIC, options(t, ArmQUIC, 3), options(t, ArmQUIC, 3))
	if plain.State().Priority != nil {
		t.Error("priority recorded although none was set")
	}
	// The quic-priority arm is the quic arm with Priority set for it.
	o = options(t, ArmQUICPriority, 3)
	o.PriorityChannel = 2
	server, client = pair(t, ArmQUICPriority, o, o)
	exchange(t, server, client, 100)
	for _, s := range []*Session{server, client} {
		if p := s.State().Priority; p == nil || p.Channel != 2 {
			t.Errorf("the quic-priority arm applied no priority to channel 2: %+v", p)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	cases := []struct {
		arm  Arm
		o    Options
		want string
	}{
		{ArmTCP, Options{}, "Channels is 0"},
		{ArmTCP, Options{Channels: 256}, "Channels is 256"},
		{"udp", Options{Channels: 1}, "unknown arm"},
		{ArmTCP, Options{Channels: 1, NotSentLowat: -1}, "NotSentLowat"},
		{ArmTCP, Options{Channels: 2, Priority: true, PriorityChannel: 1}, "applies only"},
		{ArmQUIC, Options{Channels: 2, Priority: true, PriorityChannel: 2}, "PriorityChannel is 2"},
		{ArmQUIC, Options{Channels: 2, CongestionControl: "bbr"}, "only for the tcp arm"},
		{ArmTCP, Options{Channels: 2, HandshakeTimeout: -1}, "negative"},
	}
	for _, c := range cases {
		_, err := c.o.validate(c.arm)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: err = %v, want it to mention %q", c.arm, c.o, err, c.want)
		}
	}
	if _, err := (Options{Channels: 5}).validate(ArmQUIC); err != nil {
		t.Errorf("minimal options refused: %v", err)
	}
	// QUIC without a certificate fails with advice.
	if _, err := Listen(context.Background(), ArmQUIC, "127.0.0.1:0", Options{Channels: 1}); err == nil || !strings.Contains(err.Error(), "NewCertificate") {
		t.Errorf("QUIC Listen without certificate: %v", err)
	}
	if _, err := Dial(context.Background(), ArmQUIC, "127.0.0.1:1", Options{Channels: 1}); err == nil || !strings.Contains(err.Error(), "CertPEM") {
		t.Errorf("QUIC Dial without certificate: %v", err)
	}
	if a, err := ParseArm("quic-per-channel"); err != nil || a != ArmQUICPerChannel {
		t.Errorf("ParseArm: %v %v", a, err)
	}
	if _, err := ParseArm("sctp"); err == nil || !strings.Contains(err.Error(), "quic-per-channel") {
		t.Errorf("ParseArm(sctp): %v", err)
	}
}

func TestChannelCountMismatchNamesStep(t *testing.T) {
	for _, arm := range arms() {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ln, err := Listen(ctx, arm, "127.0.0.1:0", options(t, arm, 3))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			s, err := Dial(ctx, arm, ln.Addr().String(), options(t, arm, 2))
			if err == nil {
				defer s.Close()
			}
			_, err = ln.Accept(ctx)
			var ce *ChannelError
			if !errors.As(err, &ce) || ce.Role != "server" || !strings.Contains(err.Error(), "server expects 3") {
				t.Errorf("Accept: err = %v, want a server ChannelError about the channel count", err)
			}
		})
	}
}

func TestWrongCertificateRefused(t *testing.T) {
	other, err := NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := Listen(ctx, ArmQUIC, "127.0.0.1:0", options(t, ArmQUIC, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o := Options{Channels: 1, Certificate: other.ClientOnly()}
	s, err := Dial(ctx, ArmQUIC, ln.Addr().String(), o)
	if err == nil {
		s.Close()
		t.Fatal("a client trusting another certificate connected")
	}
	if !strings.Contains(err.Error(), "QUIC handshake") {
		t.Errorf("err = %v, want it to name the handshake step", err)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := channelHeader{session: 0x0123456789abcdef, index: 4, count: 5}
	got, err := readHeader(bytes.NewReader(h.marshal()))
	if err != nil || got != h {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	bad := h.marshal()
	bad[0] = 'X'
	if _, err := readHeader(bytes.NewReader(bad)); err == nil {
		t.Error("bad magic accepted")
	}
	bad = channelHeader{session: 1, index: 5, count: 5}.marshal()
	if _, err := readHeader(bytes.NewReader(bad)); err == nil {
		t.Error("index >= count accepted")
	}
}

// TestConcurrentSessionsKeptApart dials two sessions at once to one listener
// and checks that channels are grouped by session, not mixed by arrival.
func TestConcurrentSessionsKeptApart(t *testing.T) {
	const n = 3
	for _, arm := range arms() {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			ln, err := Listen(ctx, arm, "127.0.0.1:0", options(t, arm, n))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			clients := make([]*Session, 2)
			var wg sync.WaitGroup
			for k := range clients {
				wg.Go(func() {
					s, err := Dial(ctx, arm, ln.Addr().String(), options(t, arm, n))
					if err != nil {
						t.Error(err)
						return
					}
					clients[k] = s
					for i := range n {
						if _, err := s.Channel(i).Write([]byte{byte(10*k + i)}); err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			for _, c := range clients {
				if c == nil {
					t.FailNow()
				}
				defer c.Close()
			}
			for range clients {
				s, err := ln.Accept(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				var first int
				for i := range n {
					b := make([]byte, 1)
					_ = s.Channel(i).SetReadDeadline(time.Now().Add(5 * time.Second))
					if _, err := io.ReadFull(s.Channel(i), b); err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						first = int(b[0]) / 10
					}
					if want := 10*first + i; int(b[0]) != want {
						t.Errorf("server channel %d got byte %d, want %d (session %d)", i, b[0], want, first)
					}
				}
			}
		})
	}
}

func TestIncompleteSessionTimesOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := options(t, ArmTCP, 2)
	o.HandshakeTimeout = 200 * time.Millisecond
	ln, err := Listen(ctx, ArmTCP, "127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sid, _ := newSessionID()
	if _, err := c.Write(channelHeader{session: sid, index: 0, count: 2}.marshal()); err != nil {
		t.Fatal(err)
	}
	_, err = ln.Accept(ctx)
	var ce *ChannelError
	if !errors.As(err, &ce) || ce.Channel != 1 || !strings.Contains(err.Error(), "did not arrive") {
		t.Fatalf("Accept: %v, want an error naming the missing channel 1", err)
	}
	// The half session's connection has been closed by the server.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("the server kept the incomplete session's connection open")
	}
	// A silent client: no header at all.
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := ln.Accept(ctx); err == nil || !strings.Contains(err.Error(), "header read") {
		t.Errorf("silent client: Accept err = %v, want a header read error", err)
	}
}

func TestListenerClose(t *testing.T) {
	for _, arm := range arms() {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			ln, err := Listen(ctx, arm, "127.0.0.1:0", options(t, arm, 1))
			if err != nil {
				t.Fatal(err)
			}
			// A client that never sends its header must not hold Close up.
			if arm == ArmTCP {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				time.Sleep(20 * time.Millisecond)
			}
			start := time.Now()
			cancel() // the listener's context ending closes it
			if _, err := ln.Accept(context.Background()); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Accept after the context ended: %v, want net.ErrClosed", err)
			}
			if err := ln.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("closing took %v", d)
			}
		})
	}
}

func TestDialRespectsContext(t *testing.T) {
	// A UDP port with nobody behind it: the QUIC handshake can only time out.
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Dial(ctx, ArmQUIC, pc.LocalAddr().String(), options(t, ArmQUIC, 2))
	if err == nil || !strings.Contains(err.Error(), "QUIC handshake") {
		t.Errorf("Dial: %v, want a handshake error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Dial returned after %v, the context allowed 300ms", d)
	}
}

// TestSocketHooks makes every socket of both ends inside a fresh network
// namespace through Options' hooks, and calls Listen and Dial from this
// goroutine, which is not in it: in the test process's namespace nobody
// listens on that port, so a socket made anywhere but through the hooks
// would fail to connect. The hooks must also have been called once per
// socket the arm needs.
func TestSocketHooks(t *testing.T) {
	ns, err := freshNetns()
	if err != nil {
		t.Skipf("cannot create a network namespace (need root or CAP_SYS_ADMIN): %v", err)
	}
	defer unix.Close(ns)
	for _, arm := range arms() {
		t.Run(string(arm), func(t *testing.T) {
			var listens, packets, dials atomic.Int32
			o := options(t, arm, 3)
			o.Listen = func(ctx context.Context, network, address string) (ln net.Listener, err error) {
				listens.Add(1)
				err = inNetns(ns, func() (err error) { ln, err = (&net.ListenConfig{}).Listen(ctx, network, address); return })
				return ln, err
			}
			o.ListenPacket = func(ctx context.Context, network, address string) (pc net.PacketConn, err error) {
				packets.Add(1)
				err = inNetns(ns, func() (err error) { pc, err = (&net.ListenConfig{}).ListenPacket(ctx, network, address); return })
				return pc, err
			}
			o.DialContext = func(ctx context.Context, network, address string) (c net.Conn, err error) {
				dials.Add(1)
				err = inNetns(ns, func() (err error) { c, err = (&net.Dialer{}).DialContext(ctx, network, address); return })
				return c, err
			}
			if err := dialAndAccept(arm, o); err != nil {
				t.Fatal(err)
			}
			want := map[Arm][3]int32{ // listens, packet sockets, dials
				ArmTCP: {1, 0, 3}, ArmQUIC: {0, 2, 0}, ArmQUICPriority: {0, 2, 0}, ArmQUICPerChannel: {0, 4, 0},
			}[arm]
			if got := [3]int32{listens.Load(), packets.Load(), dials.Load()}; got != want {
				t.Errorf("hooks called (listen, listen packet, dial) %v times, want %v", got, want)
			}
		})
	}
}

// freshNetns creates a network namespace with its loopback up and returns
// a descriptor for it. The thread that made it is left locked and dies
// with its goroutine.
func freshNetns() (int, error) {
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{-1, err}
			return
		}
		if err := loopbackUp(); err != nil {
			ch <- result{-1, err}
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- result{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}

// inNetns runs f on a thread inside the namespace ns; the thread is not
// given back to the runtime (it dies with the goroutine).
func inNetns(ns int, f func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			ch <- err
			return
		}
		ch <- f()
	}()
	return <-ch
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func dialAndAccept(arm Arm, o Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ln, err := Listen(ctx, arm, "127.0.0.1:0", o)
	if err != nil {
		return err
	}
	defer ln.Close()
	c, err := Dial(ctx, arm, ln.Addr().String(), o)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := ln.Accept(ctx)
	if err != nil {
		return err
	}
	return s.Close()
}

// TestSessionsOutliveListener closes the listener under a live session: the
// session keeps working, and for QUIC the shared socket is released only
// when the session closes too.
func TestSessionsOutliveListener(t *testing.T) {
	for _, arm := range arms() {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			o := options(t, arm, 2)
			ln, err := Listen(ctx, arm, "127.0.0.1:0", o)
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			c, err := Dial(ctx, arm, addr, o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := ln.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := ln.Close(); err != nil {
				t.Fatal(err)
			}
			exchange(t, s, c, 10000)
			if arm.IsQUIC() {
				if pc, err := net.ListenPacket("udp4", addr); err == nil {
					pc.Close()
					t.Fatal("the listener's UDP socket was released while a session still used it")
				}
			}
			if err := s.Close(); err != nil {
				t.Errorf("session Close: %v", err)
			}
			if arm.IsQUIC() {
				pc, err := net.ListenPacket("udp4", addr)
				if err != nil {
					t.Fatalf("the UDP socket is still held after the listener and its session closed: %v", err)
				}
				pc.Close()
			}
		})
	}
}
