// Package xwindow reads an X window back for the live SPICE rig's
// watches: a connection to an X server in this network namespace (Dial),
// the pixel format the watches read (CheckFormat), a queue of the
// window's damage events from the goroutine that times them to the one
// that reads the window (Queue), and the typing xterm found in spicy's
// window (FindArea) with the map from the guest's screen onto it
// (GuestToWindow).
//
// Use:
//
//	conn, err := xwindow.Dial(":1")
//	if err != nil { ... }
//	q := xwindow.NewQueue()
//	go func() { q.Put(xwindow.Damage{T: t, Area: area}, false) }()
//	for _, d := range q.Take() { ... }
package xwindow
