package linkmodel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// TestLineOrder: the line keeps frames by due time with ties in arrival
// order (netem's tfifo), across the ring's wrap and when it grows past
// the room it was given.
func TestLineOrder(t *testing.T) {
	var l Line
	l.ring = make([]Held, 4)
	// Advance the head so the ring wraps.
	for i := range 3 {
		l.hold(Held{Due: int64(i), Ref: int64(100 + i)})
		l.pop()
	}
	in := []Held{{Due: 50, Ref: 1}, {Due: 20, Ref: 2}, {Due: 50, Ref: 3}, {Due: 10, Ref: 4}, {Due: 20, Ref: 5}, {Due: 50, Ref: 6}, {Due: 5, Ref: 7}}
	for _, h := range in {
		l.hold(h)
	}
	var got []int64
	for l.Len() > 0 {
		got = append(got, l.pop().Ref)
	}
	want := []int64{7, 4, 2, 5, 1, 3, 6}
	if !slices.Equal(got, want) {
		t.Errorf("left in order %v, want %v (by due time, ties in arrival order)", got, want)
	}
}

// recFrames records what a Carrier asks of the holder of the frames.
type recFrames struct {
	log  *strings.Builder
	next int64
}

func (f *recFrames) Copy(ref int64, size int) int64 {
	f.next++
	c := 1_000_000 + f.next
	fmt.Fprintf(f.log, "copy %d->%d;", ref, c)
	return c
}
func (f *recFrames) Release(ref int64) { fmt.Fprintf(f.log, "release %d;", ref) }
func (f *recFrames) Classify(ref int64, size int) (uint32, bool) {
	return uint32(ref % 3), ref%2 == 0
}

// refLoop is a carrier's handling of arrivals written out step by step,
// as the forwarding loop did before the Carrier took it over (the golden
// test drives the model the same way): the frames held in a slice in due
// order, ties in arrival order, a duplicate held before the original,
// each with its own edit, a queued frame's edit given when it leaves the
// queue.
type refLoop struct {
	m    *Model
	f    *recFrames
	held []Held
}

func (r *refLoop) hold(h Held) {
	i, _ := slices.BinarySearchFunc(r.held, h.Due, func(e Held, t int64) int {
		if e.Due <= t {
			return -1
		}
		return 1
	})
	r.held = slices.Insert(r.held, i, h)
}

func (r *refLoop) dequeueUpTo(t int64) {
	for {
		at, ok := r.m.NextDequeue()
		if !ok || at > t {
			return
		}
		p, due, e, queued, ok := r.m.Dequeue(at)
		if !ok {
			continue
		}
		r.hold(Held{Due: due, Ref: p.Ref, Size: int32(p.Len), Queued: queued, Edit: e})
	}
}

func (r *refLoop) judge(at int64, ref int64, size int) {
	m := r.m
	if m.HasQueue() {
		flow, ect := r.f.Classify(ref, size)
		if m.Enqueue(at, aqm.Packet{Len: size, Flow: flow, ECT: ect, Ref: ref}) != Accepted {
			r.f.Release(ref)
		}
		return
	}
	due, v := m.Arrive(at, size)
	orig, dupe := m.edits()
	if ddue, dv, dq, _, ok := m.Duplicate(); ok && dv == Accepted {
		c := r.f.Copy(ref, size)
		r.hold(Held{Due: ddue, Ref: c, Size: int32(size), Queued: dq, Edit: dupe})
	}
	if v != Accepted {
		r.f.Release(ref)
		return
	}
	r.hold(Held{Due: due, Ref: ref, Size: int32(size), Queued: m.Queued(), Edit: orig})
}

// TestCarrierAsTheLoop: a Carrier, driven in the order its doc gives,
// decides, copies, edits, releases and sends exactly what the forwarding
// loop's own code did, for directions that take every path (duplicates,
// reordering, jitter that reorders without a rate, corruption, a
// blackout that holds, queue disciplines with their drops and marks).
func TestCarrierAsTheLoop(t *testing.T) {
	ms := time.Millisecond
	dirs := map[string]linkspec.Direction{
		"rate and loss": {Delay: 40 * ms, RateMbit: 10, Limit: 30, LossPct: 2},
		"dup reorder corrupt": {Delay: 20 * ms, RateMbit: 50, Limit: 40, DupPct: 10, ReorderPct: 5, ReorderGap: 3,
			CorruptPct: 5, LossPct: 1},
		"jitter without rate": {Delay: 20 * ms, Jitter: 10 * ms, JitterDist: "normal", Limit: 1000, DupPct: 3},
		"blackout held": {Delay: 5 * ms, RateMbit: 20, Limit: 200, Changes: []linkspec.Change{
			{At: 30 * ms, Set: "down", Hold: true}, {At: 60 * ms, Set: "up"}}, SchedulePeriod: 100 * ms},
		"codel ecn": {Delay: 10 * ms, RateMbit: 5, Limit: 100, Queue: linkspec.Queue{Kind: linkspec.CoDel, ECN: true}},
		"fq_codel":  {Delay: 10 * ms, RateMbit: 5, Limit: 60, Queue: linkspec.Queue{Kind: linkspec.FQCoDel}},
	}
	seen := map[string]string{}
	for name, d := range dirs {
		d.Seed = 42
		var refLog, carLog strings.Builder
		ref := &refLoop{m: New(d, nil), f: &recFrames{log: &refLog}}
		if ref.m.HasQueue() {
			ref.m.SetDropFunc(func(r int64, _ int, _ aqm.Cause) { ref.f.Release(r) })
		}
		car := NewCarrier(New(d, nil), d.MaxHeld(), &recFrames{log: &carLog})
		rng := rand.New(rand.NewPCG(1, 2))
		var now int64
		for i := range 20000 {
			if rng.IntN(4) == 0 {
				now += rng.Int64N(int64(5 * ms))
			} else {
				now += rng.Int64N(int64(200 * time.Microsecond))
			}
			size := 60 + rng.IntN(1455)

			ref.m.Advance(now)
			ref.dequeueUpTo(now)
			for len(ref.held) > 0 && ref.held[0].Due <= now {
				h := ref.held[0]
				ref.held = ref.held[1:]
				ref.m.Depart(int(h.Size))
				fmt.Fprintf(&refLog, "sent %d at %d edit %+v;", h.Ref, h.Due, h.Edit)
			}
			ref.judge(now, int64(i), size)

			car.Model.Advance(now)
			car.DequeueUpTo(now)
			for car.Line.Len() > 0 && car.Line.At(0).Due <= now {
				h := car.Depart()
				fmt.Fprintf(&carLog, "sent %d at %d edit %+v;", h.Ref, h.Due, h.Edit)
			}
			car.Judge(now, int64(i), size)
		}
		if refLog.String() != carLog.String() {
			r, c := strings.Split(refLog.String(), ";"), strings.Split(carLog.String(), ";")
			for k := range min(len(r), len(c)) {
				if r[k] != c[k] {
					t.Errorf("%s: step %d: the carrier did %q where the loop did %q", name, k, c[k], r[k])
					break
				}
			}
			if len(r) != len(c) {
				t.Errorf("%s: the carrier took %d steps, the loop %d", name, len(c), len(r))
			}
		}
		seen[name] = refLog.String()
		if *car.Model.counters() != *ref.m.counters() {
			t.Errorf("%s: counters %+v, the loop's %+v", name, *car.Model.counters(), *ref.m.counters())
		}
	}
	// Every path was taken somewhere.
	for name, step := range map[string]string{
		"rate and loss": "release", "dup reorder corrupt": "Corrupt:true", "jitter without rate": "copy",
		"codel ecn": "Mark:true", "fq_codel": "release",
	} {
		if !strings.Contains(seen[name], step) || !strings.Contains(seen[name], "sent") {
			t.Errorf("%s: no %q step, or nothing sent: the case does not test what it is for", name, step)
		}
	}
}
