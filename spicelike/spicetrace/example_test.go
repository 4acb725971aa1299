package spicetrace_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// A tunnel end writes one record per message; the harness reads the trace
// back.
func Example() {
	var buf bytes.Buffer
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	w, err := spicetrace.NewWriter(&buf, spicetrace.Header{Side: spicetrace.SideClient, Started: start})
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Write(spicetrace.Record{T: 10 * time.Millisecond, Dir: spicetrace.ClientToServer, Channel: 2,
		ChannelType: "inputs", Stage: spicetrace.StageData, Type: 101, Name: "key_down", Size: 10,
		Key: &spicetrace.Key{Code: 0x1e, Down: true}})
	w.Write(spicetrace.Record{T: 95 * time.Millisecond, Dir: spicetrace.ServerToClient, Channel: 1,
		ChannelType: "display", Stage: spicetrace.StageData, Type: 304, Name: "draw_copy", Size: 900,
		Draw: &spicetrace.Draw{Primary: true, Box: spicetrace.Rect{Top: 2, Left: 70, Bottom: 15, Right: 76}}})
	if err := w.Flush(); err != nil {
		fmt.Println(err)
		return
	}

	t, err := spicetrace.Read(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Header.Side, len(t.Records))
	for _, c := range t.Channels() {
		fmt.Printf("channel %d (%s): %d bytes c2s, %d bytes s2c\n", c.Channel, c.ChannelType,
			c.Bytes[spicetrace.ClientToServer], c.Bytes[spicetrace.ServerToClient])
	}
	// Output:
	// client 2
	// channel 1 (display): 0 bytes c2s, 900 bytes s2c
	// channel 2 (inputs): 10 bytes c2s, 0 bytes s2c
}

// Channels says what each connection of a trace carried; a connection is
// found by its SPICE channel type.
func ExampleTrace_Channels() {
	const trace = `{"format":"quicbench.spicetrace/1","side":"server","started":"2026-12-01T12:00:00Z"}
{"t_ns":1000000,"dir":"c2s","ch":0,"chtype":"main","stage":"link","name":"link_mess","size":38}
{"t_ns":2000000,"dir":"c2s","ch":1,"chtype":"display","stage":"link","name":"link_mess","size":38}
{"t_ns":90000000,"dir":"s2c","ch":1,"chtype":"display","stage":"data","type":302,"name":"draw_fill","size":1200}
{"t_ns":95000000,"dir":"s2c","ch":1,"chtype":"display","stage":"data","type":304,"name":"draw_copy","size":2188}
`
	t, err := spicetrace.Read(strings.NewReader(trace))
	if err != nil {
		fmt.Println(err)
		return
	}
	byType := map[string]spicetrace.ChannelInfo{}
	for _, c := range t.Channels() {
		byType[c.ChannelType] = c
	}
	d := byType["display"]
	fmt.Printf("display is connection %d: %d messages and %d bytes from the server\n",
		d.Channel, d.Messages[spicetrace.ServerToClient], d.Bytes[spicetrace.ServerToClient])
	// Output:
	// display is connection 1: 2 messages and 3388 bytes from the server
}
