package segment

import (
	"testing"
)

// FuzzParseRun checks that whatever Parse accepts, Run can cut: no frame,
// however its headers lie, makes a run panic, and every run is its
// headers and its segments' payload.
func FuzzParseRun(f *testing.F) {
	payload := make([]byte, 3000)
	for _, c := range []struct{ ipv6, udp bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		vnet, frame := superPacket(c.ipv6, c.udp, payload, 1000)
		f.Add(vnet, frame)
	}
	f.Fuzz(func(t *testing.T, vnet, frame []byte) {
		fr, err := Parse(vnet, frame)
		if err != nil || !fr.Split() {
			return
		}
		n := fr.Segments()
		dst := make([]byte, VnetLen+fr.hdr)
		run := func(first, last int) {
			out := fr.Run(first, last, dst)
			if len(out) != VnetLen+fr.hdr {
				t.Fatalf("Run(%d, %d) wrote %d bytes, want %d", first, last, len(out), VnetLen+fr.hdr)
			}
			want := 0
			for i := first; i <= last; i++ {
				want += fr.SegLen(i) - fr.hdr
			}
			if got := len(fr.Payload(first, last)); got != want {
				t.Fatalf("Payload(%d, %d) is %d bytes, the segments' lengths say %d", first, last, got, want)
			}
		}
		run(0, n-1)
		for i := range min(n, 16) {
			run(i, i)
			run(n-1-i, n-1)
		}
	})
}
