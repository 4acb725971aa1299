package linkmodeltest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Fingerprint runs d's model over a fixed sequence of 6,000 arrivals,
// the way the forwarding loop drives it (frames leave when due before the
// next arrival is judged; schedule changes apply at the arrivals' times,
// by the model's Advance; with a queue discipline the link's choices up
// to an arrival are made before it), and returns a hash of every verdict,
// due time and flag with the totals beside it.
func Fingerprint(d linkspec.Direction) string {
	m := linkmodel.New(d, nil)
	h := sha256.New()
	put := func(vs ...int64) {
		var b [8]byte
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			h.Write(b[:])
		}
	}
	type held struct {
		due  int64
		size int
	}
	var ring []held
	var counts [8]int64 // accepted lost overlimit blackout dups reordered marks queue-drops
	hold := func(due int64, size int) {
		i, _ := slices.BinarySearchFunc(ring, due, func(e held, t int64) int {
			if e.due <= t {
				return -1
			}
			return 1
		})
		ring = slices.Insert(ring, i, held{due, size})
	}
	departUpTo := func(t int64) {
		for len(ring) > 0 && ring[0].due <= t {
			m.Depart(ring[0].size)
			ring = ring[1:]
		}
	}
	if m.HasQueue() {
		m.SetDropFunc(func(ref int64, size int, c aqm.Cause) { counts[7]++; put(-3, int64(ref), int64(size), int64(c)) })
	}
	dequeueUpTo := func(t int64) {
		for {
			at, ok := m.NextDequeue()
			if !ok || at > t {
				return
			}
			p, due, edit, queued, ok := m.Dequeue(at)
			if !ok {
				continue
			}
			marked := edit.Mark
			if marked {
				counts[6]++
			}
			put(-2, int64(p.Ref), due, b2i(marked), b2i(queued))
			hold(due, p.Len)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{60, 1514, 1514, 200, 1514, 1000, 98, 1514, 590}
	var now int64
	for i := 0; i < 6000; i++ {
		switch {
		case i%1000 < 250:
			now += int64(time.Microsecond) // a flood: fills any limit
		case rng.IntN(10) < 3:
			now += int64(10 * time.Microsecond) // within a burst
		default:
			now += rng.Int64N(int64(8 * time.Millisecond))
		}
		size := sizes[i%len(sizes)]
		m.Advance(now)
		if m.HasQueue() {
			dequeueUpTo(now)
		}
		departUpTo(now)
		if m.HasQueue() {
			v := m.Enqueue(now, aqm.Packet{Len: size, Flow: uint32(i % 3), ECT: i%2 == 0, Ref: int64(i)})
			put(int64(i), int64(v))
			counts[min(int(v), 3)]++
			continue
		}
		due, v := m.Arrive(now, size)
		if ddue, dv, dq, dr, ok := m.Duplicate(); ok {
			counts[4]++
			put(-1, ddue, int64(dv), b2i(dq), b2i(dr))
			if dv == linkmodel.Accepted {
				hold(ddue, size)
			}
		}
		if v == linkmodel.Accepted && m.Reordered() {
			counts[5]++
		}
		put(int64(i), due, int64(v), b2i(m.Queued()), b2i(m.Reordered()))
		counts[min(int(v), 3)]++
		if v == linkmodel.Accepted {
			hold(due, size)
		}
	}
	return fmt.Sprintf("%s accepted %d lost %d over-limit %d blackout %d dup %d reordered %d marked %d queue-dropped %d",
		hex.EncodeToString(h.Sum(nil))[:16], counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7])
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
