package inproc

// This file is the link's one clock, which its model, its goroutines'
// timers and its trace all read: nanoseconds since New, by the time
// package, whose clock inside a synctest bubble is the bubble's. (The
// mutants command replaces it with the system's clock, which
// TestVirtualTime and TestDeterministic must catch.)

import "time"

func (l *Link) now() int64 { return int64(time.Since(l.base)) }
