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
//	defer conn.Close()
//	q := xwindow.NewQueue()
//	go q.Put(xwindow.Damage{T: time.Second, Area: spicetrace.Rect{Right: 10, Bottom: 10}}, false)
//	for _, d := range q.Take() {
//		fmt.Println(d.T, d.Area)
//	}

package xwindow
