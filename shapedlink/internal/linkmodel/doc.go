// Package linkmodel is the arithmetic of one direction of an emulated
// link, with no clock and no sockets: the caller passes each frame's
// arrival time in and gets its fate back (lost, over the limit, dropped
// by a blackout, or accepted with the time it is due out), with netem's
// order of draws and semantics (see package emulator's doc for the
// details it matches). It is shared, not copied, by every carrier of a
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
// Use:
//
//	m := linkmodel.New(linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110}, nil)
//	due, v := m.Arrive(now, 1514) // accepted, due now + 41.2112 ms
//	...
//	m.Depart(1514) // when it has left
package linkmodel
