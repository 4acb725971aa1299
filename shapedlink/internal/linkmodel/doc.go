// Package linkmodel is the arithmetic of one direction of an emulated
// link, with no clock and no sockets: the caller passes each frame's
// arrival time in and gets its fate back (lost, over the limit, dropped
// by a blackout, or accepted with the time it is due out), with netem's
// order of draws and semantics (docs/shapedlink.md, "The emulator,
// beside netem", has the details it matches). It is shared, not copied, by every carrier of a
// direction that is not the kernel's: the emulator's forwarding loop
// drives it from kernel receive timestamps, and an in-process link can
// drive it from any clock.
//
// A Model is built from a linkspec.Direction (New) and counts its
// decisions in a linkspec.Counters the caller may share. Frames go
// through Arrive, or, for a direction with a queue discipline, through
// Enqueue, NextDequeue and Dequeue; the caller calls Depart when a held
// frame leaves, and Advance to apply the direction's schedule up to a
// time. It is not safe for concurrent use: give each direction its own.
//
// Arrive judges a frame in netem's order (netem_enqueue):
//
//  1. duplication is drawn (when configured), then the loss; a frame
//     that is both duplicated and lost goes through once, as in netem,
//     where the two cancel;
//  2. a duplicate is judged before the original, as netem enqueues its
//     clone first: its own loss draw (it is never duplicated again),
//     then the limit, reordering and delay below;
//  3. the limit, which counts every frame still held, in the rate queue
//     or in the delay line (a lost frame never counts against it);
//  4. reordering: after at least gap-1 frames sent normally, a frame is
//     sent at once with the reorder probability, skipping the delay and
//     the rate;
//  5. the due time, serialisation at the rate followed by the delay (the
//     same as netem's formula when the delay is constant), the delay
//     drawn per frame when there is jitter.
//
// Use:
//
//	m := linkmodel.New(linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110}, nil)
//	due, v := m.Arrive(now, 1514) // accepted, due now + 41.2112 ms
//	...
//	m.Depart(1514) // when it has left
package linkmodel
