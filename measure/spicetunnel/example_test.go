package spicetunnel_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// What a tunnel end writes for a message it has followed: the parser's
// message becomes a trace record, timed from the trace's start.
func ExampleRecord() {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m := spiceproto.Msg{Dir: spiceproto.ServerToClient, Stage: spiceproto.StageData, Type: spiceproto.MsgDisplayDrawCopy,
		Name: "draw_copy", Size: 2188, Draw: &spiceproto.Draw{Primary: true, Box: spiceproto.Rect{Top: 12, Left: 6, Bottom: 25, Right: 12}}}
	rec := spicetunnel.Record(start, 1, spiceproto.ChannelDisplay, 0, true, m, start.Add(1523*time.Microsecond))

	var buf bytes.Buffer
	w, _ := spicetrace.NewWriter(&buf, spicetrace.Header{Side: spicetrace.SideClient, Started: start})
	w.Write(rec)
	w.Flush()
	fmt.Print(buf.String()[bytes.IndexByte(buf.Bytes(), '\n')+1:])
	// Output:
	// {"t_ns":1523000,"dir":"s2c","ch":1,"chtype":"display","stage":"data","type":304,"name":"draw_copy","size":2188,"draw":{"surface":0,"primary":true,"box":{"top":12,"left":6,"bottom":25,"right":12}}}
}
