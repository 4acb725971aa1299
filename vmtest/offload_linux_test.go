package vmtest

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// TestOffloadKeepBothBackends: with the ends' offloads kept, 32 datagrams
// written at once with UDP_SEGMENT cross the link as one super-packet.
// netem judges the super-packet whole, so datagrams are lost 32 at a time,
// a whole write or none of it, at the configured share of writes (what its
// applied line says); the emulator judges each datagram, so losses fall
// inside writes, at the configured share of datagrams. (Before Linux 6.2
// the ends segment UDP in software on an emulated link, since the shaper's
// packet socket cannot read a UDP super-packet, so the datagrams reach it
// one by one: the applied line says so.)
func TestOffloadKeepBothBackends(t *testing.T) {
	const (
		size   = 1000
		perMsg = 32
		writes = 400
		n      = perMsg * writes
		p      = 0.05
	)
	for _, b := range bothBackends {
		t.Run(string(b), func(t *testing.T) {
			l := newLinkOptions(t, "2:1000:5", shapedlink.Options{Backend: b, Offload: shapedlink.OffloadKeep})
			down, up := appliedLines(l)
			want := map[shapedlink.Backend]string{
				shapedlink.BackendNetem:    "offload keep: netem judges a GSO super-packet as one packet",
				shapedlink.BackendEmulator: "offload keep (each wire segment of a super-packet judged on its own",
			}[b]
			if !strings.Contains(down, want) || !strings.Contains(up, want) {
				t.Errorf("applied %q and %q, want both to say %q", down, up, want)
			}
			for _, o := range l.Instruments().Offload() {
				if o.WireSized() {
					t.Errorf("offloads kept, but %s", o)
				}
			}
			rx, err := listenUDP(l, clientEnd, 7480)
			if err != nil {
				t.Fatal(err)
			}
			// Room for every datagram of the run (12.8 MB, about 30 MB
			// of buffer with the kernel's overhead), so that a reader
			// the emulated CPU runs late loses none.
			if rc, err := rx.SyscallConn(); err == nil {
				_ = rc.Control(func(fd uintptr) {
					_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 32<<20)
				})
			}
			tx, err := dialUDP(l, serverEnd, clientEnd, 7480)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			raw, err := tx.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var serr error
			if err := raw.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, size)
			}); err != nil || serr != nil {
				t.Fatalf("UDP_SEGMENT: %v %v", err, serr)
			}
			before, err := l.Instruments().EgressCounters(serverEnd)
			if err != nil {
				t.Fatal(err)
			}
			seen := make([]bool, n)
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, 2048)
				for {
					_ = rx.SetReadDeadline(time.Now().Add(3 * time.Second))
					k, err := rx.Read(buf)
					if err != nil {
						return
					}
					if i := binary.BigEndian.Uint32(buf); k == size && int(i) < n {
						seen[i] = true
					}
				}
			}()
			msg := make([]byte, perMsg*size)
			// One write a millisecond, keeping that pace after a stall
			// instead of catching up in a burst of writes (four at
			// once already overflow the receiving namespace's backlog
			// behind the emulator now and then).
			pace := newPacer(time.Millisecond, time.Millisecond)
			for w := range writes {
				pace.wait()
				for j := range perMsg {
					binary.BigEndian.PutUint32(msg[j*size:], uint32(w*perMsg+j))
				}
				if _, err := tx.Write(msg); err != nil {
					t.Fatalf("write %d: %v", w, err)
				}
			}
			<-done
			after, err := l.Instruments().EgressCounters(serverEnd)
			if err != nil {
				t.Fatal(err)
			}
			rcvbuf, _ := udpRcvbufErrors(l, clientEnd)
			lost, wholeWrites, partWrites, partLost := 0, 0, 0, 0
			for w := range writes {
				k := 0
				for j := range perMsg {
					if !seen[w*perMsg+j] {
						k++
					}
				}
				lost += k
				switch {
				case k == perMsg:
					wholeWrites++
				case k > 0:
					partWrites++
					partLost += k
				}
			}
			t.Logf("%s: %d of %d datagrams lost: %d writes lost whole, %d in part; %d super-packets left the server end; receive buffer errors %d",
				b, lost, n, wholeWrites, partWrites, after.Oversize.Packets-before.Oversize.Packets, rcvbuf)
			var shaperLoss uint64
			if st, ok := l.Instruments().ShaperStats(); ok {
				d := st.Directions[0]
				shaperLoss = d.LossDrops
				t.Logf("shaper server->client: received %d, loss %d, limit %d, send errors %d, super-packets in %d out %d",
					d.Received, d.LossDrops, d.LimitDrops, d.SendErrors, d.SuperPacketsIn, d.SuperPacketsOut)
			}
			if after.Oversize.Packets-before.Oversize.Packets < writes/2 {
				t.Errorf("only %d super-packets left the server end for %d UDP_SEGMENT writes", after.Oversize.Packets-before.Oversize.Packets, writes)
			}
			// 99.9% intervals: of writes for netem, of datagrams for the
			// emulator (its random loss alone: in this emulated machine
			// the receiving namespace's backlog also overflows at times,
			// which the emulator counts as send errors).
			trials := float64(n)
			count := float64(shaperLoss)
			if b == shapedlink.BackendNetem {
				trials, count = writes, float64(wholeWrites)
				// Only the receiving socket can lose part of a
				// write; its drops are counted.
				if partLost > int(rcvbuf) {
					t.Errorf("netem lost part of %d super-packets (%d datagrams, %d of them to the receiving socket's buffer); it judges one whole", partWrites, partLost, rcvbuf)
				}
			} else if partWrites == 0 {
				t.Errorf("the emulator lost only whole writes: it judged super-packets, not segments")
			}
			mean, sd := trials*p, math.Sqrt(trials*p*(1-p))
			if lo, hi := mean-3.29*sd, mean+3.29*sd; count < lo || count > hi {
				t.Errorf("%.0f of %.0f lost, outside [%.1f, %.1f] for 5%%", count, trials, lo, hi)
			}
		})
	}
}
