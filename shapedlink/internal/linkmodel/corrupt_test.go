package linkmodel

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// TestCorruption: netem's corruption as the model draws it. About the
// configured share of the frames that survive the loss get an edit that
// flips one bit inside the frame, bytes and bits spread over the whole
// frame; a duplicate gets its own draw; a correlation changes the runs;
// and a frame the loss took is never drawn for.
func TestCorruption(t *testing.T) {
	const n = 200_000
	m := New(linkspec.Direction{Delay: time.Millisecond, RateMbit: 1000, Limit: n + 1, CorruptPct: 10, Seed: 7}, nil)
	size := 100
	var corrupt int
	bytes := make([]int, size)
	bits := make([]int, 8)
	for i := range n {
		_, v := m.Arrive(int64(i), size)
		if v != Accepted {
			t.Fatalf("frame %d: %v with nothing to drop it", i, v)
		}
		e, _ := m.edits()
		if e.Corrupt {
			corrupt++
			if int(e.Bit/8) >= size {
				t.Fatalf("flip at bit %d of a %d-byte frame", e.Bit, size)
			}
			bytes[e.Bit/8]++
			bits[e.Bit%8]++
		}
	}
	share := float64(corrupt) / n
	se := math.Sqrt(0.1 * 0.9 / n)
	if math.Abs(share-0.1) > 5*se {
		t.Errorf("corrupted %.4f of frames, want 0.1 within 5 SE (%.4f)", share, 5*se)
	}
	// Uniform over bytes and bits: each gets 1/size and 1/8 of the flips.
	for i, c := range bytes {
		if want := float64(corrupt) / float64(size); math.Abs(float64(c)-want) > 6*math.Sqrt(want) {
			t.Fatalf("byte %d flipped %d times, want about %.0f", i, c, want)
		}
	}
	for i, c := range bits {
		if want := float64(corrupt) / 8; math.Abs(float64(c)-want) > 6*math.Sqrt(want) {
			t.Fatalf("bit %d flipped %d times, want about %.0f", i, c, want)
		}
	}

	// Lost frames draw nothing: with 100% corruption and 50% loss, every
	// accepted frame is corrupted and none of the lost ones has an edit.
	m = New(linkspec.Direction{Delay: time.Millisecond, RateMbit: 1000, Limit: n + 1, LossPct: 50, CorruptPct: 100, Seed: 8}, nil)
	for i := range 1000 {
		_, v := m.Arrive(int64(i), size)
		e, _ := m.edits()
		if (v == Accepted) != e.Corrupt {
			t.Fatalf("frame %d: %v with corrupt %v", i, v, e.Corrupt)
		}
	}

	// A duplicate has its own draw: at 50% corruption and 100%
	// duplication the original's and the copy's flips are independent.
	m = New(linkspec.Direction{Delay: time.Millisecond, RateMbit: 1000, Limit: n + 1, DupPct: 100, CorruptPct: 50, Seed: 9}, nil)
	var both, either int
	for i := range 20_000 {
		m.Arrive(int64(i), size)
		o, d := m.edits()
		if o.Corrupt && d.Corrupt {
			both++
		}
		if o.Corrupt || d.Corrupt {
			either++
		}
	}
	if f := float64(both) / 20_000; math.Abs(f-0.25) > 0.02 {
		t.Errorf("original and duplicate both corrupted in %.3f of frames, want 0.25 (independent draws)", f)
	}

	// netem's correlation: runs of corrupted frames get longer.
	runs := func(corr float64) float64 {
		m := New(linkspec.Direction{Delay: time.Millisecond, RateMbit: 1000, Limit: n + 1, CorruptPct: 10, CorruptCorr: corr, Seed: 10}, nil)
		var inRun, count, total int
		for i := range n {
			m.Arrive(int64(i), size)
			if e, _ := m.edits(); e.Corrupt {
				total++
				if inRun == 0 {
					count++
				}
				inRun++
			} else {
				inRun = 0
			}
		}
		return float64(total) / float64(count)
	}
	if plain, corr := runs(0), runs(90); corr < 1.5*plain {
		t.Errorf("a 90%% correlation gave runs of %.2f corrupted frames, without it %.2f; want longer runs", corr, plain)
	}
}

// udpFrame builds an Ethernet, IPv4 and UDP frame carrying payload, with
// the UDP checksum left partial as a sender using checksum offload leaves
// it (the field holds the pseudo-header's sum), and the virtio_net_hdr
// that says so.
func udpFrame(payload []byte) (frame, vnet []byte) {
	frame = make([]byte, 14+20+8+len(payload))
	binary.BigEndian.PutUint16(frame[12:], 0x0800)
	ip := frame[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+len(payload)))
	copy(ip[12:], []byte{198, 18, 0, 1})
	copy(ip[16:], []byte{198, 18, 0, 2})
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum16(ip[:20])))
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], 4433)
	binary.BigEndian.PutUint16(udp[2:], 5555)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	copy(udp[8:], payload)
	pseudo := sum16(ip[12:20]) + 17 + uint32(8+len(payload))
	binary.BigEndian.PutUint16(udp[6:], fold(pseudo)) // partial: not complemented
	vnet = make([]byte, vnetLen)
	vnet[0] = vnetFNeedsCsum
	binary.NativeEndian.PutUint16(vnet[vnetCsumStartAt:], 14+20)
	binary.NativeEndian.PutUint16(vnet[vnetCsumOffsetAt:], 6)
	return frame, vnet
}

// sum16 and fold are the ones' complement checksum written again on
// purpose: the test checks the frames' checksums with its own arithmetic,
// not with package segment's, which builds them.
func sum16(b []byte) uint32 {
	var s uint32
	for ; len(b) >= 2; b = b[2:] {
		s += uint32(binary.BigEndian.Uint16(b))
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// udpValid verifies frame's UDP checksum as a receiver does.
func udpValid(frame []byte) bool {
	ip := frame[14:]
	udp := ip[20:]
	s := sum16(ip[12:20]) + 17 + uint32(len(udp)) + sum16(udp)
	return fold(s) == 0xffff
}

// TestEditCompletesChecksum: corrupting a frame whose checksum the sender
// left partial first makes it complete, so the flip is caught by the
// receiver's check; without that a receiver behind a veth would take the
// partial checksum as verified and deliver corrupted bytes.
func TestEditCompletesChecksum(t *testing.T) {
	payload := []byte("a datagram of quicbench, 42 bytes long....")
	frame, vnet := udpFrame(payload)
	if udpValid(frame) {
		t.Fatal("the partial checksum already verifies; the test frame is wrong")
	}
	completeChecksum(frame, vnet)
	if !udpValid(frame) || vnet[0]&vnetFNeedsCsum != 0 {
		t.Fatalf("completed checksum does not verify (flags %#x)", vnet[0])
	}
	for bit := uint32((14 + 20 + 8) * 8); bit < uint32(len(frame)*8); bit += 37 {
		frame, vnet := udpFrame(payload)
		Edit{Corrupt: true, Bit: bit}.Apply(frame, vnet)
		if udpValid(frame) {
			t.Fatalf("a flip at bit %d still verifies", bit)
		}
		if vnet[0]&vnetFNeedsCsum != 0 {
			t.Fatalf("a corrupted frame still asks for its checksum to be filled in")
		}
	}
	// A flip of the checksum's own bits fails the check too.
	frame, vnet = udpFrame(payload)
	Edit{Corrupt: true, Bit: (14+20+6)*8 + 3}.Apply(frame, vnet)
	if udpValid(frame) {
		t.Error("a flip in the checksum field verifies")
	}
}
