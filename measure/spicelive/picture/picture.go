package picture

import (
	"errors"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// GoodPictureShare defines a good picture: a live run with a display
// workload has one when spicy's window at the client showed at least this
// share of the frames a second the workload offers (its own rate), what a
// viewer sees whether the frames were lost on the way or never drawn
// because spice-server held Xspice back.
const GoodPictureShare = 0.5

// Files of the picture's capture, in a live run's directory.
const (
	// pictureLayoutFile is where the server role puts the typing xterm's
	// and the workload's rectangles on Xspice's screen (a pictureLayout)
	// for the client role, which maps the workload into spicy's window.
	pictureLayoutFile = "picture-layout.json"
	// ClientPictureFile and ServerPictureFile are the two roles'
	// FrameCaptures of the workload's region.
	ClientPictureFile = "picture-client.json"
	ServerPictureFile = "picture-server.json"
)

// pictureLayout is the server's screen as the client role needs it.
type pictureLayout struct {
	Typing   spicetrace.Rect `json:"typing"`
	Workload spicetrace.Rect `json:"workload"`
}

// FrameCapture is one role's watch of the display workload's region: on
// the server, the workload's window on Xspice's screen; on the client,
// the same part of the guest's screen in spicy's window.
//
// At the client a frame is a distinct state of the region's pixels: after
// damage touching it, the region is read back, and a reading that differs
// from the last one is a frame. At the server a frame is a drawing
// operation that touched the region (DAMAGE alone, frameCounter.drawOp):
// reading Xspice's screen back makes its driver wait for spice-server,
// which stalls the X server, the typing and the workload for seconds on a
// full display channel; and every drawing of the workload is a new frame.
type FrameCapture struct {
	// Started is the wall-clock time of t = 0: the role's trace's start.
	Started time.Time `json:"started"`
	// Region is the watched region, in the watched window's coordinates.
	Region spicetrace.Rect `json:"region"`
	// Frames are the frames' times: at the client, when the last damage
	// event touching the region before the reading that found it changed
	// arrived; at the server, when the drawing's last damage event did.
	Frames []time.Duration `json:"frames_ns"`
	// Damage counts the damage events, InRegion those touching Region,
	// and Reads the read-backs (one per batch of such events; none at
	// the server).
	Damage   int `json:"damage"`
	InRegion int `json:"in_region"`
	Reads    int `json:"reads"`
	// Error is why the watch stopped early or never started, if it did.
	Error string `json:"error,omitempty"`
}

// PictureRecord is the picture a live run with a display workload got,
// over its measured part (the typing after the warm-up): the workload's
// frames that reached spicy's window against the frames it drew, and how
// the display channel sent them (from the client end's trace).
type PictureRecord struct {
	Measured time.Duration `json:"measured_ns"`
	// ClientFrames are the workload's distinct frames seen in spicy's
	// window; DrawnFrames those drawn on Xspice's screen. ClientFPS and
	// DrawnFPS are the same per second of Measured.
	ClientFrames int     `json:"client_frames"`
	DrawnFrames  int     `json:"drawn_frames"`
	ClientFPS    float64 `json:"client_fps"`
	DrawnFPS     float64 `json:"drawn_fps"`
	// NominalFPS is the workload's own rate (spicelive.Config.FrameRate, or one
	// image per spicelive.Config.ImageInterval). Xspice draws fewer when spice-server
	// holds its X server back, which DrawnFPS then shows.
	NominalFPS float64 `json:"nominal_fps,omitempty"`
	// Delivered is ClientFrames over DrawnFrames; Good says ClientFPS
	// reached GoodPictureShare of NominalFPS (GoodPicture).
	Delivered float64 `json:"delivered"`
	Good      bool    `json:"good"`
	// StreamShare is the share of the display channel's bytes from the
	// server that were video stream frames, ImageShare that of the other
	// draws over the workload's window (images); the rest is the xterms'
	// draws and the channel's other messages.
	StreamShare float64 `json:"stream_share"`
	ImageShare  float64 `json:"image_share"`
	// BytesPerFrame is the display channel's bytes per frame that reached
	// the client (0 when none did).
	BytesPerFrame float64 `json:"bytes_per_frame"`
	// Region is the workload's region in spicy's window.
	Region spicetrace.Rect `json:"region"`
}

// frameCounter counts a region's frames from damage and read-backs into
// its capture.
type frameCounter struct {
	c    *FrameCapture
	seed maphash.Seed
	sum  uint64 // the hash of the last state counted
	have bool
	// opTouched says the drawing under way (drawOp) touched the region.
	opTouched bool
}

// drawOp takes one damage event of a drawing, as the server's watch
// counts: more says more events of the same drawing follow (DAMAGE's
// "more" bit). A drawing that touched the region is a frame, at its last
// event's time, however many rectangles it damaged.
func (f *frameCounter) drawOp(t time.Duration, area spicetrace.Rect, more bool) {
	f.c.Damage++
	if area.Intersects(f.c.Region) {
		f.c.InRegion++
		f.opTouched = true
	}
	if !more && f.opTouched {
		f.c.Frames = append(f.c.Frames, t)
		f.opTouched = false
	}
}

func newFrameCounter(c *FrameCapture) *frameCounter {
	return &frameCounter{c: c, seed: maphash.MakeSeed()}
}

// prime takes the region's first reading: the state frames change from.
func (f *frameCounter) prime(img []byte) {
	f.sum, f.have = maphash.Bytes(f.seed, img), true
}

// observe takes a batch of damage events as they arrived and, when any
// touches the region, reads it back once (read) and counts a frame at the
// last such event's time when the reading differs from the last state
// counted. A batch is the events waiting when the last read-back ended,
// so frames drawn faster than the region can be read back merge.
func (f *frameCounter) observe(batch []xwindow.Damage, read func() ([]byte, error)) error {
	t, touched := time.Duration(0), false
	for _, d := range batch {
		f.c.Damage++
		if d.Area.Intersects(f.c.Region) {
			f.c.InRegion++
			t, touched = d.T, true
		}
	}
	if !touched {
		return nil
	}
	img, err := read()
	if err != nil {
		return err
	}
	f.c.Reads++
	sum := maphash.Bytes(f.seed, img)
	if f.have && sum == f.sum {
		return nil
	}
	f.sum, f.have = sum, true
	f.c.Frames = append(f.c.Frames, t)
	return nil
}

// framesIn counts the times in [from, to) after shifting each by off.
func framesIn(ts []time.Duration, off, from, to time.Duration) int {
	n := 0
	for _, t := range ts {
		if t+off >= from && t+off < to {
			n++
		}
	}
	return n
}

// displayShares are the display channel's bytes from the server in
// [from, to) of tr, a client-end trace: all of them, those of video stream
// frames, and those of other draws touching workload (images).
func displayShares(tr *spicetrace.Trace, workload spicetrace.Rect, from, to time.Duration) (total, stream, image int64) {
	for _, r := range tr.Records {
		if r.ChannelType != "display" || r.Dir != spicetrace.ServerToClient || r.T < from || r.T >= to {
			continue
		}
		total += int64(r.Size)
		switch {
		case r.Draw == nil:
		case r.Draw.Stream:
			stream += int64(r.Size)
		case r.Draw.Box.Intersects(workload):
			image += int64(r.Size)
		}
	}
	return total, stream, image
}

// Analyse reads the picture of [from, to) of the client trace's
// time from the two roles' captures and tr, the client end's trace, with
// the workload at workload on Xspice's screen. The server's frame times
// are moved onto the client's clock by the two captures' start times.
func Analyse(client, server FrameCapture, tr *spicetrace.Trace, workload spicetrace.Rect, from, to time.Duration) (PictureRecord, error) {
	p := PictureRecord{Region: client.Region}
	if to <= from {
		return p, fmt.Errorf("a measured part from %v to %v", from, to)
	}
	for _, c := range []FrameCapture{client, server} {
		if c.Error != "" {
			return p, errors.New(c.Error)
		}
	}
	p.Measured = to - from
	p.ClientFrames = framesIn(client.Frames, 0, from, to)
	p.DrawnFrames = framesIn(server.Frames, server.Started.Sub(client.Started), from, to)
	p.ClientFPS = float64(p.ClientFrames) / p.Measured.Seconds()
	p.DrawnFPS = float64(p.DrawnFrames) / p.Measured.Seconds()
	if p.DrawnFrames > 0 {
		p.Delivered = float64(p.ClientFrames) / float64(p.DrawnFrames)
	}
	total, stream, image := displayShares(tr, workload, from, to)
	if total > 0 {
		p.StreamShare = float64(stream) / float64(total)
		p.ImageShare = float64(image) / float64(total)
	}
	if p.ClientFrames > 0 {
		p.BytesPerFrame = float64(total) / float64(p.ClientFrames)
	}
	return p, nil
}

// GoodPicture says whether a run whose client saw clientFPS frames a
// second of a workload offering offeredFPS had a good picture: at least
// GoodPictureShare of them.
func GoodPicture(clientFPS, offeredFPS float64) bool {
	return offeredFPS > 0 && clientFPS >= GoodPictureShare*offeredFPS
}

// regionPad is how far the workload's region in spicy's window reaches
// past the mapped edges: the scale read from the typing xterm's area may
// be off by a pixel over its width, which over the workload's far edge
// comes to a few. The pad is the screen's static background, and short of
// the xterms, xsession.DisplayGap away.
const regionPad = xsession.DisplayGap/2 - 1

// workloadInWindow maps the workload's rectangle on the guest's screen to
// spicy's window, by the scale and offset that take the typing xterm
// (typing, on the guest's screen) to its white area in the window (area;
// guestToWindow), padded by regionPad and cut to the window's size.
func workloadInWindow(typing, area, workload spicetrace.Rect, width, height int) spicetrace.Rect {
	toWindow := xwindow.GuestToWindow(typing, area)
	l, t := toWindow(int(workload.Left), int(workload.Top))
	r, b := toWindow(int(workload.Right)-1, int(workload.Bottom)-1)
	return spicetrace.Rect{Left: int32(max(l-regionPad, 0)), Top: int32(max(t-regionPad, 0)),
		Right: int32(min(r+1+regionPad, width)), Bottom: int32(min(b+1+regionPad, height))}
}
