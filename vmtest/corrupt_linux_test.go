package vmtest

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCorruptBothBackends: down.corrupt=10 on netem and on the emulator,
// side by side. A tenth of the datagrams get one bit flipped; the
// receiver's checksum drops every one whose flip is anywhere but the
// Ethernet source address (6 of a 106-byte frame's bytes), so about 9.4%
// are lost on both, the receiver counts UDP checksum errors, and no
// datagram ever arrives changed. (A 64-byte UDP payload sent by a socket
// is one linear buffer, so netem's byte, drawn below the linear part, is
// anywhere in the frame, as the emulator's is.) The limit (1000) holds
// every datagram, so that only corruption loses one: late timers on a
// loaded host hold more than the 10 of the delay line, and the default
// limit of 35 would cut them.
func TestCorruptBothBackends(t *testing.T) {
	for _, b := range bothBackends {
		t.Run(string(b), func(t *testing.T) {
			l := newLinkBackend(t, "20:10@1000,down.corrupt=10", b)
			down, up := appliedLines(l)
			if !strings.Contains(down, "corrupt 10%") || strings.Contains(up, "corrupt") {
				t.Fatalf("applied %q and %q, want corrupt 10%% on the server end only", down, up)
			}
			rx, err := listenUDP(l, clientEnd, 7470)
			if err != nil {
				t.Fatal(err)
			}
			before, err := udpCounter(l, clientEnd, "InCsumErrors")
			if err != nil {
				t.Fatal(err)
			}
			const n = 3000
			arrived, changed := make(chan int, 1), 0
			go func() {
				buf := make([]byte, 128)
				k := 0
				for {
					_ = rx.SetReadDeadline(time.Now().Add(3 * time.Second))
					m, err := rx.Read(buf)
					if err != nil {
						arrived <- k
						return
					}
					k++
					i := binary.BigEndian.Uint32(buf)
					if m != 64 || !bytes.Equal(buf[4:m], corruptPattern(i)) {
						changed++
					}
				}
			}()
			tx, err := dialUDP(l, serverEnd, clientEnd, 7470)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			msg := make([]byte, 64)
			// 1 ms apart on average, in bursts of 50 (few wake-ups,
			// which a busy host delays), keeping that pace after a
			// stall.
			pace := newPacer(50*time.Millisecond, 50*time.Millisecond)
			for i := range n {
				if i%50 == 0 {
					pace.wait()
				}
				binary.BigEndian.PutUint32(msg, uint32(i))
				copy(msg[4:], corruptPattern(uint32(i)))
				if _, err := tx.Write(msg); err != nil {
					t.Fatal(err)
				}
			}
			got := <-arrived
			after, err := udpCounter(l, clientEnd, "InCsumErrors")
			if err != nil {
				t.Fatal(err)
			}
			rcvbuf, _ := udpRcvbufErrors(l, clientEnd)
			lost := n - got
			want := 0.1 * 100 / 106
			share := float64(lost) / n
			t.Logf("%s: %d of %d lost (%.2f%%, want %.2f%%), %d changed, %d UDP checksum errors, %d receive-buffer drops; the sender skipped %d slots after stalls", b, lost, n, 100*share, 100*want, changed, after-before, rcvbuf, pace.skipped)
			if changed != 0 {
				t.Errorf("%d datagrams arrived changed; the receiver's checksum must drop every corrupted one", changed)
			}
			if se := math.Sqrt(want * (1 - want) / n); math.Abs(share-want) > 5*se+float64(rcvbuf)/n {
				t.Errorf("%.2f%% lost, want %.2f%% within 5 SE (%.2f%%)", 100*share, 100*want, 500*se)
			}
			if c := after - before; c < uint64(lost)/2 || c > uint64(lost) {
				t.Errorf("%d UDP checksum errors for %d lost; most corrupted datagrams reach UDP's check, never more than were lost", c, lost)
			}
		})
	}
}

// corruptPattern is the payload datagram i carries after its number.
func corruptPattern(i uint32) []byte {
	b := make([]byte, 60)
	for k := range b {
		b[k] = byte(i>>3) + byte(k*11)
	}
	return b
}

// udpCounter reads one of the Udp counters of /proc/thread-self/net/snmp
// in end e's namespace.
func udpCounter(l vmLink, e end, name string) (uint64, error) {
	var n uint64
	err := l.Do(e, func() error {
		data, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		var names []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "Udp: ") {
				continue
			}
			f := strings.Fields(line)[1:]
			if names == nil {
				names = f
				continue
			}
			for i, k := range names {
				if k == name && i < len(f) {
					n, err = strconv.ParseUint(f[i], 10, 64)
					return err
				}
			}
		}
		return nil
	})
	return n, err
}
