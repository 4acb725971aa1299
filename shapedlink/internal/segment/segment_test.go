package segment

import (
	"errors"
	"testing"
)

// TestParse: how many wire segments a frame stands for and their lengths,
// and what is refused.
func TestParse(t *testing.T) {
	payload := make([]byte, 2500)
	vnet, frame := superPacket(false, false, payload, 1000)
	f, err := Parse(vnet, frame)
	if err != nil {
		t.Fatal(err)
	}
	if f.Segments() != 3 || f.hdr != 54 || f.SegLen(0) != 1054 || f.SegLen(2) != 554 || len(f.Payload(1, 2)) != 1500 {
		t.Errorf("segments %d, headers %d, lengths %d %d, payload 1-2 %d", f.Segments(), f.hdr, f.SegLen(0), f.SegLen(2), len(f.Payload(1, 2)))
	}
	// Not a super-packet: one segment, the frame itself.
	plain := make([]byte, VnetLen)
	g, err := Parse(plain, frame[:300])
	if err != nil || g.Segments() != 1 || g.SegLen(0) != 300 || g.Split() {
		t.Errorf("a plain frame: %d segments of %d, split %v, %v", g.Segments(), g.SegLen(0), g.Split(), err)
	}
	for name, mod := range map[string]func(v, f []byte) ([]byte, []byte){
		"ufo":           func(v, f []byte) ([]byte, []byte) { v[1] = gsoUDP; return v, f },
		"no gso_size":   func(v, f []byte) ([]byte, []byte) { v[4], v[5] = 0, 0; return v, f },
		"not ip":        func(v, f []byte) ([]byte, []byte) { f[12], f[13] = 0x08, 0x06; return v, f },
		"udp as tcp":    func(v, f []byte) ([]byte, []byte) { f[14+9] = 17; return v, f },
		"headers only":  func(v, f []byte) ([]byte, []byte) { return v, f[:54] },
		"ihl 4":         func(v, f []byte) ([]byte, []byte) { f[14] = 0x44; return v, f },
		"data offset 4": func(v, f []byte) ([]byte, []byte) { f[14+20+12] = 4 << 4; return v, f },
		"ip too long":   func(v, f []byte) ([]byte, []byte) { return v, append(f, make([]byte, 65536)...) },
	} {
		v, fr := superPacket(false, false, payload, 1000)
		v, fr = mod(v, fr)
		if _, err := Parse(v, fr); !errors.Is(err, errNotSplittable) {
			t.Errorf("%s: %v, want ErrNotSplittable", name, err)
		}
	}
	if _, err := Parse(vnet[:4], frame); err == nil {
		t.Error("a short virtio-net header was accepted")
	}
}
