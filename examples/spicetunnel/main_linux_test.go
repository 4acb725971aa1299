package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

func TestFlagsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-listen", "x:1"}, `-end ""`},
		{[]string{"-end", "client", "-listen", "x:1"}, "needs -server"},
		{[]string{"-end", "client", "-listen", "x:1", "-server", "y:2", "-arm", "quic"}, "needs -cert"},
		{[]string{"-end", "server", "-listen", "x:1"}, "needs -spice"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-arm", "quic-per-channel", "-cert", "c"}, "-cert and -key"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-arm", "quic-priority"}, "no channel to prioritise"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-arm", "sctp"}, "\"sctp\" is not an arm with carriers: use tcp, quic, quic-per-channel or tcp-mux"},
		{[]string{"-end", "server", "-spice", "z:3"}, "-listen is empty"},
		{[]string{"-end", "client", "-listen", "x:1", "-server", "y:2", "-arm", "quinn-bbr", "-secret-file", "s"}, "needs -cert"},
		{[]string{"-end", "client", "-listen", "x:1", "-server", "y:2", "-arm", "quinn-bbr", "-secret-file", "s", "-cert", "c"}, ""},
		{[]string{"-end", "client", "-listen", "x:1", "-server", "y:2", "-arm", "quinn-reno", "-secret-file", "s", "-cert", "c", "-cc", "bbr"}, "quinn-<controller> names quinn's"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-arm", "quinn"}, "quinn-cubic, quinn-newreno or quinn-bbr"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-arm", "quinn-foo"}, "quinn's controllers are"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-arm", "quic", "-cert", "c", "-key", "k", "-cc", "bbr"}, "tcp and tcp-mux arms only"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "extra"}, "unexpected arguments"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3"}, "-secret-file is required"},
		{[]string{"-end", "client", "-listen", "x:1", "-server", "y:2", "-secret-file", "s"}, ""},
		{[]string{"-end", "client", "-listen", "x:1", "-server", "y:2", "-secret-file", "s", "-limit", "3"}, "apply to the server end"},
		{[]string{"-end", "server", "-listen", "x:1", "-spice", "z:3", "-secret-file", "s", "-peer-limit", "-1"}, "positive bounds"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	if code := run([]string{"-end", "nowhere"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("a usage error exits %d, want 2", code)
	}
}

// Both ends of the command over the quic arm on loopback: the server end
// makes the certificate, the client end reads it, bytes go through and
// each end writes its trace and reports the channel.
func TestEndsOverLoopback(t *testing.T) {
	dir := t.TempDir()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err == nil {
			io.Copy(c, c)
			c.Close()
		}
	}()
	free := func(network string) string {
		if network == "udp" {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			return pc.LocalAddr().String()
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	carrierAddr, clientAddr := free("udp"), free("tcp")
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	secret := secretFile(t)
	srv := config{end: "server", arm: "quic", listen: carrierAddr, spice: echo.Addr().String(), cert: cert, key: key,
		trace: filepath.Join(dir, "server.jsonl"), secret: secret}
	cli := config{end: "client", arm: "quic", listen: clientAddr, server: carrierAddr, cert: cert, trace: filepath.Join(dir, "client.jsonl"),
		secret: secret}
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sctx, stopServer := context.WithCancel(ctx)
	type out struct {
		n   int
		err error
	}
	srvDone := make(chan out, 1)
	go func() {
		st, err := runEnd(sctx, srv, log)
		srvDone <- out{len(st), err}
	}()
	for _, err := os.Stat(cert); err != nil; _, err = os.Stat(cert) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the listener follows the certificate
	cctx, stopClient := context.WithCancel(ctx)
	cliDone := make(chan out, 1)
	go func() {
		st, err := runEnd(cctx, cli, log)
		cliDone <- out{len(st), err}
	}()
	var c net.Conn
	for c == nil {
		if c, err = net.Dial("tcp", clientAddr); err != nil {
			c = nil
			time.Sleep(20 * time.Millisecond)
		}
	}
	msg := "not SPICE, but carried all the same"
	c.Write([]byte(msg))
	c.(*net.TCPConn).CloseWrite()
	back, _ := io.ReadAll(c)
	c.Close()
	if string(back) != msg {
		t.Errorf("through the tunnel: %q", back)
	}
	time.Sleep(200 * time.Millisecond)
	stopClient()
	co := <-cliDone
	stopServer()
	so := <-srvDone
	if co.err != nil || so.err != nil || co.n != 1 || so.n != 1 {
		t.Errorf("client end: %d channels, %v; server end: %d channels, %v", co.n, co.err, so.n, so.err)
	}
	for _, side := range []string{"server", "client"} {
		f, err := os.Open(filepath.Join(dir, side+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := spicetrace.Read(f)
		f.Close()
		if err != nil || tr.Header.Side != side {
			t.Errorf("%s trace: %v, %+v", side, err, tr)
		}
	}
	if info, err := os.Stat(key); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v, %v; want it private", info, err)
	}
}

// secretFile writes a secret both ends can read.
func secretFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tunnel.secret")
	if err := os.WriteFile(p, []byte("a test secret of more than sixteen bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
