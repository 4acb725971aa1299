package transport_test

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/sys/unix"

	"github.com/shakenfist/quicbench/transport"
)

// quicBulk sends n bytes from a quic-go server on serverPC to a quic-go
// client on clientPC, the way code that drives quic-go itself would, and
// returns whether each end's connection reported GSO in use.
func quicBulk(t *testing.T, serverPC, clientPC net.PacketConn, n int64) (serverGSO, clientGSO bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cert, err := transport.NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, clientTLS, err := cert.TLSConfigs("bulk-test")
	if err != nil {
		t.Fatal(err)
	}
	str := &quic.Transport{Conn: serverPC}
	defer str.Close()
	ln, err := str.Listen(serverTLS, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gso := make(chan bool, 1)
	go func() {
		defer close(gso)
		conn, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		st, err := conn.OpenUniStreamSync(ctx)
		if err == nil {
			_, err = io.CopyN(st, zeros{}, n)
			_ = st.Close()
		}
		if err != nil {
			t.Errorf("server: %v", err)
		}
		gso <- conn.ConnectionState().GSO
		<-conn.Context().Done() // the client closes once it has read it all
	}()
	ctr := &quic.Transport{Conn: clientPC}
	defer ctr.Close()
	conn, err := ctr.Dial(ctx, serverPC.LocalAddr(), clientTLS, &quic.Config{})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	st, err := conn.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.Copy(io.Discard, st)
	if err != nil || got != n {
		t.Fatalf("client read %d of %d bytes: %v", got, n, err)
	}
	clientGSO = conn.ConnectionState().GSO
	if p := conn.ConnectionState().TLS.NegotiatedProtocol; p != "bulk-test" {
		t.Errorf("ALPN %q, want the protocol given to TLSConfigs", p)
	}
	_ = conn.CloseWithError(0, "done")
	return <-gso, clientGSO
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// WithoutGSO turns GSO off for quic-go on one socket: the same bulk
// transfer over loopback reports GSO in use on plain sockets (the control)
// and not on wrapped ones.
func TestWithoutGSOOnAQUICGoTransport(t *testing.T) {
	if os.Getenv("QUIC_GO_DISABLE_GSO") != "" {
		t.Skip("QUIC_GO_DISABLE_GSO is set: the control cannot show GSO")
	}
	listen := func(t *testing.T, wrap bool) net.PacketConn {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if wrap {
			if pc, err = transport.WithoutGSO(pc); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { pc.Close() })
		return pc
	}
	for _, wrap := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "WithoutGSO"}[wrap]
		t.Run(name, func(t *testing.T) {
			if !wrap && !kernelHasUDPGSO() {
				t.Skip("this kernel refuses UDP_SEGMENT: there is no GSO to control for")
			}
			sgso, cgso := quicBulk(t, listen(t, wrap), listen(t, wrap), 8<<20)
			if want := !wrap; sgso != want || cgso != want {
				t.Errorf("%s: ConnectionState().GSO server %v client %v, want %v", name, sgso, cgso, want)
			}
		})
	}
}

func kernelHasUDPGSO() bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	_, err = unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	return err == nil
}

// Anything but a UDP socket is refused with what to pass instead.
func TestWithoutGSORefusesOtherConns(t *testing.T) {
	pc, err := net.ListenPacket("ip4:icmp", "127.0.0.1")
	if err != nil {
		t.Skipf("no raw socket to try with: %v", err)
	}
	defer pc.Close()
	if _, err := transport.WithoutGSO(pc); err == nil || !strings.Contains(err.Error(), "*net.UDPConn") {
		t.Errorf("WithoutGSO(%T): %v, want an error naming *net.UDPConn", pc, err)
	}
	if _, err := transport.WithoutGSO(nil); err == nil {
		t.Error("WithoutGSO(nil) accepted")
	}
}
