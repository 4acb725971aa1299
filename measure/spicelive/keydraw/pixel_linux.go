package keydraw

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// PixelWatch watches spicy's window on the client's X server for changes
// of the typing xterm's pixels, and types the keys itself, so that both
// are timed on the client trace's clock.
//
// It asks DAMAGE for every rectangle drawn in the window (raw rectangles)
// and, for each that touches the typing area, reads the area back
// (GetImage) and compares it with the last reading: spicy's toolkit may
// redraw one bounding box over several areas, so a damage event alone does
// not say the area changed. The damage events are timed as they arrive, by
// a goroutine that does nothing else. The keys go in through XTEST, as
// xdotool sends them, but from this connection: the press is timed when it
// is sent, and a request after it bounds when the server processed it.
type PixelWatch struct {
	conn  *xgb.Conn
	win   xproto.Window
	root  xproto.Window
	dmg   damage.Damage
	start time.Time
	codes map[string]xproto.Keycode
	last  []byte // the area's pixels as last read

	mu       sync.Mutex
	capture  PixelCapture
	err      error // the first X error or failed read
	stopping atomic.Bool
	done     chan struct{}
}

// pressGap is the time between a key's press and its release, as xdotool
// leaves it (half its default 12 ms delay).
const pressGap = 6 * time.Millisecond

// StartPixelWatch connects to display, finds the typing xterm in spicy's
// window winID (at winRect on the screen), and starts watching it. Times
// are from traceStart.
func StartPixelWatch(display, winID string, winRect spicetrace.Rect, traceStart time.Time) (*PixelWatch, error) {
	id, err := strconv.ParseUint(winID, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("spicy's window id %q: %w", winID, err)
	}
	conn, err := xwindow.Dial(display)
	if err != nil {
		return nil, err
	}
	w := &PixelWatch{conn: conn, win: xproto.Window(id), start: traceStart, done: make(chan struct{})}
	w.capture.Window = winRect
	if err := w.setup(); err != nil {
		conn.Close()
		return nil, err
	}
	q := xwindow.NewQueue()
	go w.stamp(q)
	go w.check(q)
	return w, nil
}

func (w *PixelWatch) now() time.Duration { return time.Since(w.start) }

// setup checks the extensions, reads the keyboard map, finds the typing
// area and reads it, and asks for the window's damage.
func (w *PixelWatch) setup() error {
	c := w.conn
	if err := damage.Init(c); err != nil {
		return fmt.Errorf("the client's X server has no DAMAGE extension: %w", err)
	}
	if _, err := damage.QueryVersion(c, 1, 1).Reply(); err != nil {
		return fmt.Errorf("DAMAGE's version: %w", err)
	}
	if err := xtest.Init(c); err != nil {
		return fmt.Errorf("the client's X server has no XTEST extension: %w", err)
	}
	if _, err := xtest.GetVersion(c, 2, 2).Reply(); err != nil {
		return fmt.Errorf("XTEST's version: %w", err)
	}
	setup := xproto.Setup(c)
	w.root = setup.DefaultScreen(c).Root
	if err := w.readKeymap(setup); err != nil {
		return err
	}
	geo, err := xproto.GetGeometry(c, xproto.Drawable(w.win)).Reply()
	if err != nil {
		return fmt.Errorf("spicy's window's geometry: %w", err)
	}
	if err := xwindow.CheckFormat(setup, geo.Depth); err != nil {
		return err
	}
	img, err := w.read(spicetrace.Rect{Right: int32(geo.Width), Bottom: int32(geo.Height)})
	if err != nil {
		return fmt.Errorf("reading spicy's window: %w", err)
	}
	stride := 4 * int(geo.Width)
	area, err := xwindow.FindArea(int(geo.Width), int(geo.Height), func(x, y int) bool {
		i := y*stride + 4*x
		return img[i] == 0xff && img[i+1] == 0xff && img[i+2] == 0xff
	})
	if err != nil {
		return err
	}
	w.capture.Area = area
	if w.last, err = w.read(area); err != nil {
		return fmt.Errorf("reading the typing area: %w", err)
	}
	if w.dmg, err = damage.NewDamageId(c); err != nil {
		return err
	}
	if err := damage.CreateChecked(c, w.dmg, xproto.Drawable(w.win), damage.ReportLevelRawRectangles).Check(); err != nil {
		return fmt.Errorf("watching spicy's window for damage: %w", err)
	}
	return nil
}

// readKeymap finds the keycodes of the keys typeKeys types.
func (w *PixelWatch) readKeymap(setup *xproto.SetupInfo) error {
	first, n := setup.MinKeycode, int(setup.MaxKeycode)-int(setup.MinKeycode)+1
	km, err := xproto.GetKeyboardMapping(w.conn, first, byte(n)).Reply()
	if err != nil {
		return fmt.Errorf("the client's keyboard map: %w", err)
	}
	syms := map[xproto.Keysym]string{0xff0d: "Return"}
	for r := 'a'; r <= 'z'; r++ {
		syms[xproto.Keysym(r)] = string(r)
	}
	w.codes = map[string]xproto.Keycode{}
	per := int(km.KeysymsPerKeycode)
	for i := 0; per > 0 && i*per < len(km.Keysyms); i++ {
		if name, ok := syms[km.Keysyms[i*per]]; ok {
			if _, seen := w.codes[name]; !seen {
				w.codes[name] = xproto.Keycode(int(first) + i)
			}
		}
	}
	if len(w.codes) != len(syms) {
		return fmt.Errorf("the client's keyboard map lacks some of a-z and Return (found %d of %d)", len(w.codes), len(syms))
	}
	return nil
}

// read reads r of spicy's window, 4 bytes a pixel.
func (w *PixelWatch) read(r spicetrace.Rect) ([]byte, error) {
	rep, err := xproto.GetImage(w.conn, xproto.ImageFormatZPixmap, xproto.Drawable(w.win), int16(r.Left), int16(r.Top),
		uint16(r.Right-r.Left), uint16(r.Bottom-r.Top), 0xffffffff).Reply()
	if err != nil {
		return nil, err
	}
	if want := 4 * int(r.Right-r.Left) * int(r.Bottom-r.Top); len(rep.Data) < want {
		return nil, fmt.Errorf("an image of %d bytes, want %d", len(rep.Data), want)
	}
	return rep.Data, nil
}

// stamp times the damage events as they arrive and hands them on.
func (w *PixelWatch) stamp(q *xwindow.Queue) {
	for {
		ev, xerr := w.conn.WaitForEvent()
		t := w.now()
		switch e := ev.(type) {
		case nil:
			if xerr == nil {
				q.Put(xwindow.Damage{}, true) // the connection is closed
				return
			}
			q.Put(xwindow.Damage{T: t, Err: xerr}, false)
		case damage.NotifyEvent:
			a := e.Area
			q.Put(xwindow.Damage{T: t, Area: spicetrace.Rect{Top: int32(a.Y), Left: int32(a.X), Bottom: int32(a.Y) + int32(a.Height), Right: int32(a.X) + int32(a.Width)}}, false)
		}
	}
}

// check reads the typing area back after each damage event that touches
// it, and records a change when it differs from the last reading.
func (w *PixelWatch) check(q *xwindow.Queue) {
	defer close(w.done)
	area := w.capture.Area
	for {
		batch := q.Take()
		if len(batch) == 0 {
			return
		}
		for _, d := range batch {
			w.checkOne(d, area)
		}
	}
}

// checkOne counts a damage event and, when it touches area, reads area
// back.
func (w *PixelWatch) checkOne(d xwindow.Damage, area spicetrace.Rect) {
	if w.stopping.Load() {
		return
	}
	if d.Err != nil {
		w.fail(fmt.Errorf("an X error while watching spicy's window: %v", d.Err))
		return
	}
	w.mu.Lock()
	w.capture.Damage++
	in := d.Area.Intersects(area)
	if in {
		w.capture.InArea++
	}
	w.mu.Unlock()
	if !in {
		return
	}
	img, err := w.read(area)
	if err != nil {
		if !w.stopping.Load() {
			w.fail(fmt.Errorf("reading the typing area back: %w", err))
		}
		return
	}
	if bytes.Equal(img, w.last) {
		return
	}
	checked := w.now()
	changed := changedRects(w.last, img, area)
	w.last = img
	w.mu.Lock()
	w.capture.Changes = append(w.capture.Changes, PixelChange{T: d.T, Checked: checked, Damaged: d.Area, Changed: changed})
	w.mu.Unlock()
}

func (w *PixelWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// Press types key into the window that has the focus, through XTEST, and
// records when.
func (w *PixelWatch) Press(key string) error {
	code, ok := w.codes[key]
	if !ok {
		return fmt.Errorf("the pixel watch cannot type %q: it types a-z and Return", key)
	}
	t := w.now()
	if err := xtest.FakeInputChecked(w.conn, xproto.KeyPress, byte(code), 0, w.root, 0, 0, 0).Check(); err != nil {
		return fmt.Errorf("pressing %s: %w", key, err)
	}
	synced := w.now()
	time.Sleep(pressGap)
	released := w.now()
	if err := xtest.FakeInputChecked(w.conn, xproto.KeyRelease, byte(code), 0, w.root, 0, 0, 0).Check(); err != nil {
		return fmt.Errorf("releasing %s: %w", key, err)
	}
	w.mu.Lock()
	w.capture.Keys = append(w.capture.Keys, TypedKey{Key: key, T: t, Synced: synced, Released: released})
	w.mu.Unlock()
	return nil
}

// Close stops the watch and returns what it captured, and its first
// error. It is safe to call more than once.
func (w *PixelWatch) Close() (PixelCapture, error) {
	if !w.stopping.Swap(true) {
		damage.Destroy(w.conn, w.dmg)
		w.conn.Sync()
		w.conn.Close()
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.capture, w.err
}

// Finish stops the watch and writes what it captured to dir's
// PixelCaptureFile.
func (w *PixelWatch) Finish(dir string) error {
	pc, err := w.Close()
	if err != nil {
		return err
	}
	if len(pc.Keys) == 0 {
		return errors.New("the pixel watch typed no key")
	}
	return results.WriteJSON(filepath.Join(dir, PixelCaptureFile), pc)
}
