package shapedlink

import (
	"bytes"
	"encoding/binary"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
	"github.com/vishvananda/netlink"
)

// TestCorruptOption: corrupt=pct[/corr] is read, written back and applied
// as netem's corrupt, on both backends' words.
func TestCorruptOption(t *testing.T) {
	p, err := ParseProfile("80:10,down.corrupt=0.5%/25")
	if err != nil {
		t.Fatal(err)
	}
	if s := p.String(); s != "80:10,down.corrupt=0.5/25" {
		t.Errorf("String() = %q", s)
	}
	d := p.Direction(Down)
	if d.CorruptPct != 0.5 || d.CorruptCorr != 25 || p.Direction(Up).CorruptPct != 0 {
		t.Errorf("down %v/%v, up %v", d.CorruptPct, d.CorruptCorr, p.Direction(Up).CorruptPct)
	}
	if w := d.Describe(); !strings.Contains(w, " corrupt 0.5% 25%") {
		t.Errorf("the emulator's applied line %q does not say corrupt 0.5%% 25%%", w)
	}
	if n, err := netemnl.ReadBack(netemnl.Root(netlinkRoot(), d), netemnl.Extras{}, d); err != nil || !strings.Contains(n, " corrupt 0.5% 25%") {
		t.Errorf("netem's line %q (%v) does not say corrupt 0.5%% 25%%", n, err)
	}
	for in, says := range map[string]string{
		"80:10,corrupt=101":   "more than 100",
		"80:10,corrupt=0/10":  "correlates nothing",
		"80:10,corrupt=1/2/3": "parts",
	} {
		if _, err := ParseProfile(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseProfile(%q) = %v, want it to say %q", in, err, says)
		}
	}
}

// udpSNMP reads the Udp line's counters of the namespace ns from
// /proc/thread-self/net/snmp (the thread's namespace, not the process's).
func udpSNMP(t *testing.T, ns *Namespace) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	err := ns.Do(func() error {
		b, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		var names []string
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "Udp:" {
				continue
			}
			if names == nil {
				names = f[1:]
				continue
			}
			for i, v := range f[1:] {
				n, _ := strconv.ParseUint(v, 10, 64)
				out[names[i]] = n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorruptEmulator: with down.corrupt=10 the emulator flips one bit in
// a tenth of the datagrams; the receiver's checksum drops every one of
// them but those whose flip fell in the Ethernet source address (6 of
// the frame's 106 bytes, which nothing checks), and never delivers a
// changed payload.
func TestCorruptEmulator(t *testing.T) {
	l := newTestLink(t, "20:100,down.corrupt=10", BackendEmulator)
	if a := l.Applied(); !strings.Contains(a[0], "corrupt 10%") || strings.Contains(a[1], "corrupt") {
		t.Fatalf("applied %q, want corrupt 10%% on server->client only", a)
	}
	srv, cli := udpPair(t, l)
	_ = cli.SetReadBuffer(4 << 20)
	const n, payload = 10000, 64
	before := udpSNMP(t, l.Client())
	got := make(chan [2]int, 1)
	go func() {
		buf := make([]byte, 2048)
		var arrived, changed int
		for {
			_ = cli.SetReadDeadline(time.Now().Add(time.Second))
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				got <- [2]int{arrived, changed}
				return
			}
			arrived++
			i := binary.BigEndian.Uint32(buf)
			if k != payload || !bytes.Equal(buf[4:k], pattern(i, payload-4)) {
				changed++
			}
		}
	}()
	msg := make([]byte, payload)
	to := cli.LocalAddr().(*net.UDPAddr)
	next := time.Now()
	for i := range n {
		for time.Now().Before(next) {
		}
		// After a stall (a loaded host descheduled the sender) go on at
		// the pace rather than catch up in a burst the queue cannot hold.
		if now := time.Now(); now.Sub(next) > time.Millisecond {
			next = now
		}
		next = next.Add(100 * time.Microsecond)
		binary.BigEndian.PutUint32(msg, uint32(i))
		copy(msg[4:], pattern(uint32(i), payload-4))
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
	}
	r := <-got
	arrived, changed := r[0], r[1]
	after := udpSNMP(t, l.Client())
	sh, _ := l.Instruments().ShaperStats()
	d := sh.Directions[0]
	lost := n - arrived
	csum := after["InCsumErrors"] - before["InCsumErrors"]
	t.Logf("%d of %d arrived, %d changed; receiver's UDP checksum errors %d; shaper forwarded %d, dropped %d", arrived, n, changed, csum, d.Forwarded, d.Drops())
	if changed != 0 {
		t.Errorf("%d datagrams arrived with a changed payload; the receiver's checksum must drop every corrupted one", changed)
	}
	if d.Drops() != 0 {
		t.Errorf("the shaper dropped %d frames on a link with no loss and room to spare", d.Drops())
	}
	frame := 14 + 20 + 8 + payload
	want := 0.1 * float64(frame-6) / float64(frame)
	share := float64(lost) / n
	if se := math.Sqrt(want * (1 - want) / n); math.Abs(share-want) > 5*se {
		t.Errorf("%.2f%% lost, want %.2f%% within 5 SE (%.2f%%): a tenth corrupted, all caught but source-address flips", 100*share, 100*want, 500*se)
	}
	// A flip in the UDP header or payload is the UDP checksum's to catch;
	// one in the IP header is IP's, one in the destination address or
	// type the device's: UDP's are about 72 of the 100 bytes that count.
	if lo := uint64(0.5 * float64(lost)); csum < lo || csum > uint64(lost) {
		t.Errorf("the receiver counted %d UDP checksum errors for %d lost; want most of them, never more", csum, lost)
	}
}

// pattern is the payload datagram i carries after its number.
func pattern(i uint32, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(i) + byte(k*7)
	}
	return b
}

// netlinkRoot is a root qdisc's place on some device, for building a
// netem qdisc without a kernel.
func netlinkRoot() netlink.QdiscAttrs {
	return netlink.QdiscAttrs{LinkIndex: 2, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
}
