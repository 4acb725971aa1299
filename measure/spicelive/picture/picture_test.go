package picture

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// TestFrameCounter feeds the counter batches of damage with the region's
// state after each: it counts a frame only when the region's pixels
// changed, not per damage event, per read-back, or for damage elsewhere.
func TestFrameCounter(t *testing.T) {
	region := spicetrace.Rect{Left: 100, Top: 0, Right: 200, Bottom: 50}
	in := spicetrace.Rect{Left: 120, Top: 10, Right: 130, Bottom: 20}
	out := spicetrace.Rect{Left: 0, Top: 0, Right: 50, Bottom: 50}
	img := func(v byte) []byte { return []byte{v, v, v, v} }
	steps := []struct {
		batch []xwindow.Damage
		state byte // the region's pixels when read back
	}{
		{[]xwindow.Damage{{T: 1, Area: in}}, 1},                     // a frame
		{[]xwindow.Damage{{T: 2, Area: in}, {T: 3, Area: in}}, 2},   // one frame from two events
		{[]xwindow.Damage{{T: 4, Area: in}}, 2},                     // redrawn the same: none
		{[]xwindow.Damage{{T: 5, Area: out}}, 3},                    // damage elsewhere: not read
		{[]xwindow.Damage{{T: 6, Area: out}, {T: 7, Area: in}}, 3},  // a frame at the event inside
		{[]xwindow.Damage{{T: 8, Area: in}}, 0},                     // back to the first state: a frame
		{[]xwindow.Damage{{T: 9, Area: in}, {T: 10, Area: out}}, 0}, // unchanged
		{[]xwindow.Damage{{T: 11, Area: in}, {T: 12, Area: in}}, 4}, // a frame at the last event inside
	}
	c := FrameCapture{Region: region}
	f := newFrameCounter(&c)
	f.prime(img(0))
	for _, s := range steps {
		if err := f.observe(s.batch, func() ([]byte, error) { return img(s.state), nil }); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{1, 3, 7, 8, 12}
	if len(c.Frames) != len(want) {
		t.Fatalf("frames at %v, want %v", c.Frames, want)
	}
	for i := range want {
		if c.Frames[i] != want[i] {
			t.Fatalf("frames at %v, want %v", c.Frames, want)
		}
	}
	if c.Damage != 12 || c.InRegion != 9 || c.Reads != 7 {
		t.Errorf("damage %d, in region %d, reads %d; want 12, 9, 7", c.Damage, c.InRegion, c.Reads)
	}
}

// TestAnalysePicture checks the frames and rates over the measured part,
// the server's clock moved onto the client's, and the shares of the
// display's bytes read from a synthetic client trace.
func TestAnalysePicture(t *testing.T) {
	workload := spicetrace.Rect{Left: 500, Top: 0, Right: 1000, Bottom: 500}
	xterm := spicetrace.Rect{Left: 0, Top: 0, Right: 480, Bottom: 300}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	rec := func(at, size int, d *spicetrace.Draw) spicetrace.Record {
		return spicetrace.Record{T: ms(at), Dir: spicetrace.ServerToClient, ChannelType: "display", Size: size, Draw: d}
	}
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		rec(500, 9999, &spicetrace.Draw{Box: workload, Stream: true}), // before the measured part
		rec(1000, 6000, &spicetrace.Draw{Box: workload, Stream: true}),
		rec(1500, 3000, &spicetrace.Draw{Box: workload}), // an image
		rec(1600, 500, &spicetrace.Draw{Box: xterm}),     // a glyph
		rec(1700, 500, nil), // not a draw
		{T: ms(1800), Dir: spicetrace.ClientToServer, ChannelType: "display", Size: 7777},
		{T: ms(1900), Dir: spicetrace.ServerToClient, ChannelType: "inputs", Size: 7777},
		rec(3000, 9999, &spicetrace.Draw{Box: workload, Stream: true}), // at the end: out
	}}
	start := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	// The server's trace started 100 ms after the client's.
	client := FrameCapture{Started: start, Frames: []time.Duration{ms(900), ms(1000), ms(1400), ms(2000), ms(2999), ms(3000)}}
	server := FrameCapture{Started: start.Add(ms(100))}
	for i := 0; i < 12; i++ {
		server.Frames = append(server.Frames, ms(800+100*i)) // 900 to 2000 on the client's clock
	}
	p, err := Analyse(client, server, tr, workload, ms(1000), ms(3000))
	if err != nil {
		t.Fatal(err)
	}
	if p.ClientFrames != 4 || p.DrawnFrames != 11 {
		t.Errorf("%d frames at the client and %d drawn, want 4 and 11", p.ClientFrames, p.DrawnFrames)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(p.ClientFPS, 2) || !near(p.DrawnFPS, 5.5) || !near(p.Delivered, 4.0/11) {
		t.Errorf("fps %v of %v, delivered %v; want 2 of 5.5, 4/11", p.ClientFPS, p.DrawnFPS, p.Delivered)
	}
	if !near(p.StreamShare, 0.6) || !near(p.ImageShare, 0.3) || !near(p.BytesPerFrame, 2500) {
		t.Errorf("stream share %v, image share %v, bytes per frame %v; want 0.6, 0.3, 2500", p.StreamShare, p.ImageShare, p.BytesPerFrame)
	}
	if _, err := Analyse(FrameCapture{Error: "no X"}, server, tr, workload, ms(1000), ms(3000)); err == nil {
		t.Error("a capture that failed gave figures")
	}
}

// TestGoodPicture checks the rule's edge: half the workload's own rate
// at the client is good, however few frames Xspice drew.
func TestGoodPicture(t *testing.T) {
	for _, c := range []struct {
		client, offered float64
		good            bool
	}{{12.5, 25, true}, {12.4, 25, false}, {25, 25, true}, {0, 0, false}, {3, 0, false}, {2.4, 25, false}} {
		if got := GoodPicture(c.client, c.offered); got != c.good {
			t.Errorf("GoodPicture(%v, %v) = %v, want %v", c.client, c.offered, got, c.good)
		}
	}
}

// TestWorkloadInWindow maps the workload by the typing xterm's area: one
// to one, and at half the scale.
func TestWorkloadInWindow(t *testing.T) {
	typing := spicetrace.Rect{Left: 0, Top: 0, Right: 484, Bottom: 316}
	workload := spicetrace.Rect{Left: 492, Top: 0, Right: 1012, Bottom: 560}
	for _, c := range []struct {
		name   string
		area   spicetrace.Rect
		scale  float64
		offset int32
	}{
		// One to one, the guest's screen 30 pixels down the window: the
		// white area is the inside, a pixel in from each edge.
		{"one to one", spicetrace.Rect{Left: 1, Top: 31, Right: 483, Bottom: 345}, 1, 30},
		// At half the size.
		{"half", spicetrace.Rect{Left: 1, Top: 31, Right: 242, Bottom: 188}, 0.5, 30},
	} {
		got := workloadInWindow(typing, c.area, workload, 2000, 2000)
		sc := func(v int32) int32 { return int32(float64(v) * c.scale) }
		want := spicetrace.Rect{Left: sc(workload.Left), Top: sc(workload.Top) + c.offset, Right: sc(workload.Right), Bottom: sc(workload.Bottom) + c.offset}
		// It covers the workload, within the pad and the scale's error of
		// a few pixels, and stops short of the typing xterm's border.
		const slack = regionPad + 3
		if got.Left > want.Left || got.Top > want.Top || got.Right < want.Right || got.Bottom < want.Bottom ||
			got.Left < want.Left-slack || got.Right > want.Right+slack || got.Bottom > want.Bottom+slack || got.Left <= c.area.Right {
			t.Errorf("%s: %+v, want %+v padded by at most %d and clear of the xterm's area %+v", c.name, got, want, slack, c.area)
		}
	}
	// Cut to a window narrower than the workload's right edge.
	if got := workloadInWindow(typing, spicetrace.Rect{Left: 1, Top: 31, Right: 483, Bottom: 345}, workload, 1000, 798); got.Right != 1000 {
		t.Errorf("cut to the window: %+v, want its right edge at 1000", got)
	}
}

// TestDrawOps feeds the server's counter damage events of drawings: a
// drawing that touched the region is one frame, however many rectangles
// it damaged, and drawings elsewhere are none.
func TestDrawOps(t *testing.T) {
	region := spicetrace.Rect{Left: 100, Top: 0, Right: 200, Bottom: 50}
	in := spicetrace.Rect{Left: 120, Top: 10, Right: 130, Bottom: 20}
	out := spicetrace.Rect{Left: 0, Top: 0, Right: 50, Bottom: 50}
	c := FrameCapture{Region: region}
	f := newFrameCounter(&c)
	for _, e := range []struct {
		t    time.Duration
		area spicetrace.Rect
		more bool
	}{
		{1, in, false},                // a frame
		{2, in, true}, {3, in, false}, // one frame in two rectangles
		{4, out, false},                                // elsewhere
		{5, in, true}, {6, out, true}, {7, out, false}, // a frame ending outside
		{8, out, true}, {9, in, false}, // a frame
		{10, in, false}, // a frame
	} {
		f.drawOp(e.t, e.area, e.more)
	}
	want := []time.Duration{1, 3, 7, 9, 10}
	if !slices.Equal(c.Frames, want) {
		t.Errorf("frames at %v, want %v", c.Frames, want)
	}
	if c.Damage != 10 || c.InRegion != 6 {
		t.Errorf("damage %d, in region %d; want 10, 6", c.Damage, c.InRegion)
	}
}
