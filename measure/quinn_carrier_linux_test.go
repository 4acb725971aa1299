package measure_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// quinnEnds are the pids of the processes running bin that parent
// started (other tests' quinn ends may run beside them).
func quinnEnds(t *testing.T, bin string, parent int) []int {
	t.Helper()
	var pids []int
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, e := range exes {
		dir := filepath.Dir(e)
		if p, err := os.Readlink(e); err != nil || p != bin {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(parent) {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			pids = append(pids, pid)
		}
	}
	return pids
}

// quinnCarrierPair is a quinn-<cc> carrier listener and a carrier dialled
// to it on loopback, with the rig's kind of certificate and secret.
func quinnCarrierPair(t *testing.T, ctx context.Context, arm transport.Arm) (measure.ArmCarrierListener, measure.ArmCarrier) {
	t.Helper()
	cert, err := transport.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	o := transport.Options{CarrierSecret: []byte("a secret of more than sixteen bytes")}
	so, co := o, o
	so.Certificate, co.Certificate = cert, cert.ClientOnly()
	ln, err := measure.ListenCarrier(ctx, arm, "127.0.0.1:0", so)
	if err != nil {
		t.Fatal(err)
	}
	c, err := measure.DialCarrier(ctx, arm, ln.Addr().String(), co)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	return ln, c
}

// Three channels through a quinn-bbr carrier, one after another and all
// open at once: what the client sends comes back byte for byte from the
// server's side, which sees each channel's index and the carrier's id;
// both ends report quinn's bbr read back, no offload and 1400-byte
// datagrams; and no quinn end is left when both are closed.
func TestQuinnCarrierCarries(t *testing.T) {
	bin := needQuinn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ln, c := quinnCarrierPair(t, ctx, "quinn-bbr")
	ends := quinnEnds(t, bin, os.Getpid())
	if len(ends) != 2 {
		t.Fatalf("%d quinn ends started by this process, want 2: %v", len(ends), ends)
	}
	defer ln.Close()
	defer c.Close()
	go func() {
		for {
			ch, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				// Echo with the channel's index and carrier id in front, so
				// the client can check the server end saw them.
				fmt.Fprintf(ch, "%d %016x\n", ch.Index(), ch.Carrier())
				io.Copy(ch, ch)
				ch.Close()
			}()
		}
	}()
	var chans []transport.CarrierChannel
	for i := range 3 {
		ch, err := c.Open(ctx)
		if err != nil {
			t.Fatalf("channel %d: %v", i, err)
		}
		chans = append(chans, ch)
	}
	errs := make(chan error, len(chans))
	for i, ch := range chans {
		go func() {
			msg := make([]byte, 256<<10+i)
			rand.Read(msg)
			go func() { ch.Write(msg) }()
			r := bufio.NewReader(ch)
			head, err := r.ReadString('\n')
			if want := fmt.Sprintf("%d %016x\n", i, c.ID()); err != nil || head != want {
				errs <- fmt.Errorf("channel %d: the server end saw %q (%v), want %q", i, head, err, want)
				return
			}
			back := make([]byte, len(msg))
			if _, err := io.ReadFull(r, back); err != nil || !bytes.Equal(back, msg) {
				errs <- fmt.Errorf("channel %d: %d bytes came back changed (%v)", i, len(msg), err)
				return
			}
			errs <- ch.Close()
		}()
	}
	for range chans {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	// Each end sent at least the three messages' bytes; only the
	// statistics it records at exit, which StateAtEnd waits for, say so.
	const carried = 3 * 256 << 10
	for _, st := range []transport.State{measure.StateAtEnd(c), measure.StateAtEnd(ln)} {
		if st.CongestionControl != "quinn-bbr" || st.Arm != "quinn-bbr" || len(st.QUIC) != 1 {
			t.Fatalf("%s: arm %s, controller %q, %d connections; want quinn-bbr's bbr on one", st.Role, st.Arm, st.CongestionControl, len(st.QUIC))
		}
		q := st.QUIC[0]
		if q.GSO || q.ConfiguredPacketSize != 1400 || q.PathMTUDiscovery || !strings.HasPrefix(q.QUICVersion, "quinn ") || q.MaxStreamReceiveWindow == 0 {
			t.Errorf("%s: GSO %v, datagram %d, PMTUD %v, version %q, stream window %d", st.Role, q.GSO, q.ConfiguredPacketSize,
				q.PathMTUDiscovery, q.QUICVersion, q.MaxStreamReceiveWindow)
		}
		if q.Stats.BytesSent < carried || q.Stats.PacketsSent < carried/1400 {
			t.Errorf("%s: the state at the end says %d bytes in %d packets sent, want at least the %d bytes carried (statistics at exit)",
				st.Role, q.Stats.BytesSent, q.Stats.PacketsSent, carried)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("closing the carrier: %v", err)
	}
	if err := ln.Close(); err != nil {
		t.Errorf("closing the listener: %v", err)
	}
	for _, pid := range ends {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("quinn end %d still runs after both were closed", pid)
		}
	}
}

// A carrier without the listener's secret gets no channel through quinn:
// the header's proof is checked behind quinn's server end.
func TestQuinnCarrierChecksTheSecret(t *testing.T) {
	needQuinn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cert, err := transport.NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := measure.ListenCarrier(ctx, "quinn-cubic", "127.0.0.1:0",
		transport.Options{Certificate: cert, CarrierSecret: []byte("the listener's secret, sixteen+")})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := measure.DialCarrier(ctx, "quinn-cubic", ln.Addr().String(),
		transport.Options{Certificate: cert.ClientOnly(), CarrierSecret: []byte("another secret, sixteen or more")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ch, err := c.Open(ctx); err == nil {
		ch.Write([]byte("hello"))
		defer ch.Close()
	}
	actx, stop := context.WithTimeout(ctx, 2*time.Second)
	defer stop()
	ch, err := ln.Accept(actx)
	if err == nil {
		ch.Close()
		t.Fatal("a channel with the wrong secret was accepted")
	}
	t.Logf("refused: %v", err)
}

const quinnTunnelEnv = "MEASURE_QUINN_TUNNEL_HELPER"

// TestQuinnTunnelHelper is the process TestQuinnCarrierDiesWithTunnel
// kills: both ends of a quinn-newreno carrier, one channel open.
func TestQuinnTunnelHelper(t *testing.T) {
	if os.Getenv(quinnTunnelEnv) == "" {
		t.Skip("run by TestQuinnCarrierDiesWithTunnel")
	}
	ln, c := quinnCarrierPair(t, t.Context(), "quinn-reno")
	if _, err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(t.Context()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("carrying", c.State().CongestionControl)
	time.Sleep(time.Minute)
}

// The quinn ends of a tunnel's carrier die with the tunnel's process when
// it is killed (SIGKILL): none is left running.
func TestQuinnCarrierDiesWithTunnel(t *testing.T) {
	bin := needQuinn(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestQuinnTunnelHelper$", "-test.v")
	cmd.Env = append(os.Environ(), quinnTunnelEnv+"=1", quinncarrier.BinaryEnv+"="+bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	var lines []string
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "carrying") {
		lines = append(lines, sc.Text())
	}
	if !strings.HasPrefix(sc.Text(), "carrying quinn-newreno") {
		t.Fatalf("the helper did not carry over quinn's newreno: %q, %q", sc.Text(), lines)
	}
	ends := quinnEnds(t, bin, cmd.Process.Pid)
	if len(ends) != 2 {
		t.Fatalf("%d quinn ends running under the tunnel, want 2: %v", len(ends), ends)
	}
	cmd.Process.Kill()
	cmd.Wait()
	for range 50 {
		left := 0
		for _, pid := range ends {
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == bin {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("quinn ends %v outlived the killed tunnel", ends)
}
