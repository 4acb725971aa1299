package inproc

import "time"

// now is the link's clock, the one clock its model and its trace read:
// nanoseconds since New, by the time package, whose clock inside a
// synctest bubble is the bubble's. (The mutants command replaces it with
// the system's wall clock, which TestVirtualTime and TestDeterministic
// must catch.)
func (l *Link) now() int64 { return int64(time.Since(l.base)) }
