package keydraw_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Key-to-draw from a client-end trace: the busy area's draw right after
// the key is not the answer; the typing area's draw is.
func ExampleAnalyse() {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	typing := spicetrace.Rect{Top: 0, Left: 0, Bottom: 316, Right: 484}
	busy := spicetrace.Rect{Top: 400, Left: 0, Bottom: 534, Right: 484}
	key := spicetrace.Record{T: ms(1000), Dir: spicetrace.ClientToServer, ChannelType: "inputs", Key: &spicetrace.Key{Code: 30, Down: true}}
	draw := func(t time.Duration, box spicetrace.Rect) spicetrace.Record {
		return spicetrace.Record{T: t, Dir: spicetrace.ServerToClient, ChannelType: "display", Draw: &spicetrace.Draw{Primary: true, Box: box}}
	}
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key,
		draw(ms(1004), spicetrace.Rect{Top: 500, Bottom: 513, Right: 300}), // a busy line
		draw(ms(1082), spicetrace.Rect{Top: 3, Left: 9, Bottom: 16, Right: 15}),
	}}
	a := keydraw.Analyse(tr, typing, busy, ms(1000))
	fmt.Println("key-to-draw", a.Samples[0].RTT, "; counting every draw would say", a.AllDrawsMin)
	// Output:
	// key-to-draw 82ms ; counting every draw would say 4ms
}
