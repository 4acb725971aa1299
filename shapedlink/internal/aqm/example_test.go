package aqm_test

import (
	"encoding/binary"
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
)

// udpFrame is an Ethernet/IPv4/UDP frame from 10.0.0.1:sport to
// 10.0.0.2:4433 with the given TOS byte and a valid header checksum.
func udpFrame(sport uint16, tos byte, size int) []byte {
	f := make([]byte, size)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[1], ip[8], ip[9] = 0x45, tos, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(size-14))
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	sum = sum&0xffff + sum>>16
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum+sum>>16))
	binary.BigEndian.PutUint16(ip[20:], sport)
	binary.BigEndian.PutUint16(ip[22:], 4433)
	return f
}

// The emulator's use, in miniature: frames waiting for the link's rate
// are classified and queued by reference; each time the link is free it
// dequeues, sets CE on a marked frame, and sends it. Here a bulk flow
// has queued four full-size frames when one small frame of another flow
// arrives: fq_codel sends it after the bulk flow's first quantum.
func Example() {
	frames := [][]byte{
		udpFrame(1000, 0x02, 1514), udpFrame(1000, 0x02, 1514),
		udpFrame(1000, 0x02, 1514), udpFrame(1000, 0x02, 1514),
		udpFrame(2000, 0x00, 100),
	}
	cfg := aqm.Config{Kind: aqm.FQCoDel, ECN: true}
	q, err := aqm.New(cfg, func(p aqm.Packet, c aqm.Cause) {
		fmt.Printf("dropped frame %d (%v)\n", p.Ref, c)
	})
	if err != nil {
		panic(err)
	}
	const seed = 0x5eed
	for i, f := range frames {
		flow, ect, _ := aqm.Classify(f, seed)
		q.Enqueue(0, aqm.Packet{Len: len(f), Flow: flow, ECT: ect, Ref: int64(i)})
	}
	for now := int64(0); ; now += 12_000 { // a 1514-byte frame every 12 us: 1 Gbit/s
		p, marked, ok := q.Dequeue(now)
		if !ok {
			break
		}
		if marked {
			aqm.SetCE(frames[p.Ref])
		}
		fmt.Printf("frame %d: %d bytes, waited %d us\n", p.Ref, p.Len, (now-p.EnqueuedAt())/1000)
	}
	st := q.Stats()
	fmt.Printf("new flows %d, drops %d, marks %d\n", st.NewFlows, st.CoDelDrops+st.OverlimitDrops, st.Marks)
	fmt.Println(cfg.WithDefaults().Describe())
	// Output:
	// frame 0: 1514 bytes, waited 0 us
	// frame 4: 100 bytes, waited 12 us
	// frame 1: 1514 bytes, waited 24 us
	// frame 2: 1514 bytes, waited 36 us
	// frame 3: 1514 bytes, waited 48 us
	// new flows 2, drops 0, marks 0
	// fq_codel limit 10240 flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 33554432 drop_batch 64 ecn
}

// SetCE marks an ECN-capable IPv4 packet and fixes its header checksum.
func ExampleSetCE() {
	f := udpFrame(1000, 0x02, 100) // ECT(0)
	before := binary.BigEndian.Uint16(f[24:])
	fmt.Println(aqm.SetCE(f), f[15]&3, before != binary.BigEndian.Uint16(f[24:]))
	fmt.Println(aqm.SetCE(udpFrame(1000, 0x00, 100))) // Not-ECT: drop it instead
	// Output:
	// true 3 true
	// false
}
