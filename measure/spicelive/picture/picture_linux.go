package picture

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// frameWatch counts the frames of a region of a window on an X server
// (frameCounter): DAMAGE over the window, timed as the events arrive by a
// goroutine that does nothing else, and the region read back after each
// batch of events touching it.
type frameWatch struct {
	// ops, when set, counts drawing operations over the region from
	// DAMAGE alone, never reading the window back (the server's watch).
	ops      bool
	conn     *xgb.Conn
	win      xproto.Window
	dmg      damage.Damage
	start    time.Time
	counter  *frameCounter
	mu       sync.Mutex // guards capture
	capture  FrameCapture
	stopping atomic.Bool
	done     chan struct{}
}

// readRect reads r of win, whatever the pixel format.
func readRect(conn *xgb.Conn, win xproto.Window, r spicetrace.Rect) ([]byte, error) {
	rep, err := xproto.GetImage(conn, xproto.ImageFormatZPixmap, xproto.Drawable(win), int16(r.Left), int16(r.Top),
		uint16(r.Right-r.Left), uint16(r.Bottom-r.Top), 0xffffffff).Reply()
	if err != nil {
		return nil, err
	}
	return rep.Data, nil
}

// startFrameWatch watches region of win on conn, which it then owns;
// times are from start. With ops it counts drawings from DAMAGE alone.
func startFrameWatch(conn *xgb.Conn, win xproto.Window, region spicetrace.Rect, start time.Time, ops bool) (*frameWatch, error) {
	if region.Empty() {
		return nil, fmt.Errorf("an empty region %+v to watch", region)
	}
	w := &frameWatch{ops: ops, conn: conn, win: win, start: start, done: make(chan struct{})}
	w.capture = FrameCapture{Started: start, Region: region}
	w.counter = newFrameCounter(&w.capture)
	if err := damage.Init(conn); err != nil {
		return nil, fmt.Errorf("the X server has no DAMAGE extension: %w", err)
	}
	if _, err := damage.QueryVersion(conn, 1, 1).Reply(); err != nil {
		return nil, fmt.Errorf("DAMAGE's version: %w", err)
	}
	if !ops {
		img, err := readRect(conn, win, region)
		if err != nil {
			return nil, fmt.Errorf("reading the workload's region %+v: %w", region, err)
		}
		w.counter.prime(img)
	}
	var err error
	if w.dmg, err = damage.NewDamageId(conn); err != nil {
		return nil, err
	}
	if err := damage.CreateChecked(conn, w.dmg, xproto.Drawable(win), damage.ReportLevelRawRectangles).Check(); err != nil {
		return nil, fmt.Errorf("watching the window for damage: %w", err)
	}
	q := xwindow.NewQueue()
	go w.stamp(q)
	go w.check(q)
	return w, nil
}

// stamp times the damage events as they arrive and hands them on.
func (w *frameWatch) stamp(q *xwindow.Queue) {
	for {
		ev, xerr := w.conn.WaitForEvent()
		t := time.Since(w.start)
		switch e := ev.(type) {
		case nil:
			if xerr == nil {
				q.Put(xwindow.Damage{}, true)
				return
			}
			q.Put(xwindow.Damage{T: t, Err: xerr}, false)
		case damage.NotifyEvent:
			a := e.Area
			area := spicetrace.Rect{Top: int32(a.Y), Left: int32(a.X), Bottom: int32(a.Y) + int32(a.Height), Right: int32(a.X) + int32(a.Width)}
			if w.ops {
				w.mu.Lock()
				if !w.stopping.Load() {
					w.counter.drawOp(t, area, e.Level&damageMore != 0)
				}
				w.mu.Unlock()
				continue
			}
			q.Put(xwindow.Damage{T: t, Area: area}, false)
		}
	}
}

// damageMore is DAMAGE's bit in a notify event's level that says more
// events of the same drawing follow.
const damageMore = 0x80

// check counts frames from each batch of damage events.
func (w *frameWatch) check(q *xwindow.Queue) {
	defer close(w.done)
	for {
		batch := q.Take()
		if len(batch) == 0 {
			return
		}
		if w.stopping.Load() {
			continue
		}
		var xerr error
		for _, d := range batch {
			if d.Err != nil {
				xerr = d.Err
			}
		}
		w.mu.Lock()
		err := w.counter.observe(batch, func() ([]byte, error) { return readRect(w.conn, w.win, w.capture.Region) })
		if xerr != nil && err == nil {
			err = fmt.Errorf("an X error: %v", xerr)
		}
		if err != nil && !w.stopping.Load() && w.capture.Error == "" {
			w.capture.Error = "watching the workload's frames: " + err.Error()
		}
		w.mu.Unlock()
	}
}

// close stops the watch and returns what it captured.
func (w *frameWatch) close() FrameCapture {
	if !w.stopping.Swap(true) {
		damage.Destroy(w.conn, w.dmg)
		w.conn.Sync()
		w.conn.Close()
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.capture
}

// Watch is a role's frame watch, or why it has none, until it is
// written to its file.
type Watch struct {
	watch   *frameWatch
	capture FrameCapture // when watch is nil
}

// Finish stops the watch and writes its capture to path; the picture is
// a figure beside the keys, so its failures are recorded, not the run's.
func (p *Watch) Finish(path string, log *slog.Logger) {
	c := p.capture
	if p.watch != nil {
		c = p.watch.close()
	}
	if c.Error != "" {
		log.Warn("the display workload's frames", "err", c.Error)
	}
	if err := results.WriteJSON(path, c); err != nil {
		log.Warn("writing the frame capture", "err", err)
	}
}

// failedPicture is a Watch that never started, for err.
func failedPicture(start time.Time, err error) *Watch {
	return &Watch{capture: FrameCapture{Started: start, Error: err.Error()}}
}

// WriteLayout puts the server's typing xterm and workload where the
// client role reads them (pictureLayoutFile).
func WriteLayout(dir string, typing spicetrace.Rect, workload *spicetrace.Rect) error {
	if workload == nil {
		return nil
	}
	return results.WriteJSON(filepath.Join(dir, pictureLayoutFile), pictureLayout{Typing: typing, Workload: *workload})
}

// WatchServer counts the drawings over the workload's window on
// Xspice's screen, display, from start (the server trace's), by
// DAMAGE alone: it never reads Xspice's screen back (FrameCapture).
func WatchServer(display string, workload *spicetrace.Rect, start time.Time) *Watch {
	if workload == nil {
		return failedPicture(start, errors.New("no workload window"))
	}
	conn, err := xwindow.Dial(display)
	if err != nil {
		return failedPicture(start, err)
	}
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	w, err := startFrameWatch(conn, root, *workload, start, true)
	if err != nil {
		conn.Close()
		return failedPicture(start, fmt.Errorf("on Xspice's screen: %w", err))
	}
	return &Watch{watch: w}
}

// WatchClient watches the workload as spicy's window winID, on the
// client's display, shows it: the server's layout (pictureLayoutFile in
// dir) mapped into the window by the typing xterm's white area found
// there. Times are from start (the client trace's).
func WatchClient(display, winID, dir string, start time.Time) *Watch {
	var lay pictureLayout
	if err := results.ReadJSON(filepath.Join(dir, pictureLayoutFile), &lay); err != nil {
		return failedPicture(start, fmt.Errorf("the server's layout: %w", err))
	}
	id, err := strconv.ParseUint(winID, 10, 32)
	if err != nil {
		return failedPicture(start, fmt.Errorf("spicy's window id %q: %w", winID, err))
	}
	conn, err := xwindow.Dial(display)
	if err != nil {
		return failedPicture(start, err)
	}
	win := xproto.Window(id)
	region, err := clientRegion(conn, win, lay)
	if err == nil {
		var w *frameWatch
		if w, err = startFrameWatch(conn, win, region, start, false); err == nil {
			return &Watch{watch: w}
		}
	}
	conn.Close()
	return failedPicture(start, fmt.Errorf("in spicy's window: %w", err))
}

// clientRegion finds the typing xterm's white area in spicy's window and
// maps the workload there.
func clientRegion(conn *xgb.Conn, win xproto.Window, lay pictureLayout) (spicetrace.Rect, error) {
	setup := xproto.Setup(conn)
	geo, err := xproto.GetGeometry(conn, xproto.Drawable(win)).Reply()
	if err != nil {
		return spicetrace.Rect{}, fmt.Errorf("the window's geometry: %w", err)
	}
	if err := xwindow.CheckFormat(setup, geo.Depth); err != nil {
		return spicetrace.Rect{}, err
	}
	w, h := int(geo.Width), int(geo.Height)
	img, err := readRect(conn, win, spicetrace.Rect{Right: int32(w), Bottom: int32(h)})
	if err != nil {
		return spicetrace.Rect{}, err
	}
	if len(img) < 4*w*h {
		return spicetrace.Rect{}, fmt.Errorf("an image of %d bytes, want %d", len(img), 4*w*h)
	}
	area, err := xwindow.FindArea(w, h, func(x, y int) bool {
		i := 4 * (y*w + x)
		return img[i] == 0xff && img[i+1] == 0xff && img[i+2] == 0xff
	})
	if err != nil {
		return spicetrace.Rect{}, err
	}
	return workloadInWindow(lay.Typing, area, lay.Workload, w, h), nil
}
