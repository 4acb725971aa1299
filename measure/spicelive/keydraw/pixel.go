package keydraw

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// PixelCaptureFile holds, in a live run's directory, what the client role
// saw of spicy's window when spicelive.Config.Pixel is set: a PixelCapture.
const PixelCaptureFile = "pixel-capture.json"

// PixelTolerance is how much earlier than its draw at the tunnel's client
// end a key's first pixel change may be seen before it counts as early
// (PixelAnalysis.Early): the two clocks are one, but each is read a little
// after its event.
const PixelTolerance = 2 * time.Millisecond

// PixelCapture is what the client role records of spicy's window on the
// client's X server (Xvfb) for the key-to-pixel figure. Times are the
// client trace's.
type PixelCapture struct {
	// Window is spicy's window on the client's screen. Area is the typed-
	// into xterm as spicy shows it, in the window's coordinates: the part
	// of the window whose pixel changes are timed.
	Window spicetrace.Rect `json:"window"`
	Area   spicetrace.Rect `json:"area"`
	// Keys are the keys typed, in order.
	Keys []TypedKey `json:"keys"`
	// Changes are the changes of Area's pixels, in order.
	Changes []PixelChange `json:"changes"`
	// Damage counts the window's damage events, InArea those that touched
	// Area. Each of those was checked by reading Area back; Changes are
	// the ones that found it changed.
	Damage int `json:"damage"`
	InArea int `json:"in_area"`
}

// TypedKey is one key the rig typed into spicy's window.
type TypedKey struct {
	// Key is the key's X name, as xdotool would take it ("a", "Return").
	Key string `json:"key"`
	// T is when the press was sent to the X server; Synced when the server
	// had answered a request sent right after it. The server processed
	// the press between the two. Released is when the release was sent.
	T        time.Duration `json:"t_ns"`
	Synced   time.Duration `json:"synced_ns"`
	Released time.Duration `json:"released_ns"`
}

// PixelChange is a change of the watched area's pixels.
type PixelChange struct {
	// T is when the damage event that led to the change being found
	// arrived; Checked when reading the area back said it had changed.
	// Should another damage event of the area have come between the two,
	// the change may be its, and T is early by at most Checked - T.
	T       time.Duration `json:"t_ns"`
	Checked time.Duration `json:"checked_ns"`
	// Damaged is the damage event's rectangle, in the window's
	// coordinates.
	Damaged spicetrace.Rect `json:"damaged"`
	// Changed are the rectangles of the pixels that differ from the area's
	// previous reading, in the window's coordinates (changedRects).
	// Captures made before they were recorded lack them.
	Changed []spicetrace.Rect `json:"changed,omitempty"`
}

// PixelKey is one typed key's figures. A figure that could not be had is
// -1.
type PixelKey struct {
	// At is when the key was typed, from the typing's start.
	At time.Duration `json:"at_ns"`
	// Pixel is key-to-pixel: from the key typed to the first change of the
	// typing area's pixels in spicy's window, before the next key; with a
	// display workload, to the first change over its glyph's cell, within
	// the key timeout (analysePixelGlyphs).
	Pixel time.Duration `json:"pixel_ns"`
	// Tunnel is from the key typed to its key press passing the tunnel's
	// client end (spicy's input path).
	Tunnel time.Duration `json:"tunnel_ns"`
	// Draw is that key press's key-to-draw at the tunnel (Analysis).
	Draw time.Duration `json:"draw_ns"`
	// Unanswered says no change came before the next key (with a
	// workload: none over its glyph's cell within the key timeout). A key
	// with Pixel -1 that was answered was not timed: the key before it was
	// unanswered, so its first change may be that key's late answer; with
	// a workload, it draws no glyph of its own or was typed in the
	// typing's last key timeout.
	Unanswered bool `json:"unanswered,omitempty"`
}

// Spread is a few order statistics of a set of durations (nearest rank).
type Spread struct {
	Min time.Duration `json:"min_ns"`
	P25 time.Duration `json:"p25_ns"`
	P50 time.Duration `json:"p50_ns"`
	P75 time.Duration `json:"p75_ns"`
	Max time.Duration `json:"max_ns"`
	N   int           `json:"n"`
}

// PixelAnalysis is the key-to-pixel figure of one live run beside its
// key-to-draw, read from its PixelCapture and its Analysis.
//
// A key's pixel is the first change of the typing area's pixels after it
// was typed and before the next key was; a key with none is unanswered,
// and the key after it is not timed, as with key-to-draw. The key press
// it became at the tunnel is the first one after it was typed and before
// the next key. With a display workload keys are attributed by glyph
// instead (analysePixelGlyphs). The figures below are over the keys typed
// after the warm-up that have both key-to-pixel and key-to-draw.
type PixelAnalysis struct {
	Keys []PixelKey `json:"keys"`
	// Typed counts the keys typed; Unanswered those with no change of the
	// typing area before the next key (or the capture's end);
	// AfterUnanswered those not timed because the key before was.
	Typed           int `json:"typed"`
	Unanswered      int `json:"unanswered"`
	AfterUnanswered int `json:"after_unanswered"`
	// Diff is key-to-pixel minus key-to-draw; Input is from the key typed
	// to the tunnel, Output from the draw at the tunnel to the pixels
	// (Diff = Input + Output); Pixel is key-to-pixel.
	Diff   Spread `json:"diff"`
	Input  Spread `json:"input"`
	Output Spread `json:"output"`
	Pixel  Spread `json:"pixel"`
	// Early counts keys whose pixels changed more than PixelTolerance
	// before their draw at the tunnel: the attribution went wrong for them.
	Early int `json:"early"`
	// MaxSync is the widest interval in which a key's press was processed
	// (TypedKey.Synced - T).
	MaxSync time.Duration `json:"max_sync_ns"`
	// Area is the watched area, in spicy's window's coordinates, and Scale
	// spicy's scale from the guest's screen to it.
	Area  spicetrace.Rect `json:"area"`
	Scale float64         `json:"scale"`
	// Method is MethodGlyph when keys were attributed by glyph
	// (analysePixelGlyphs), empty otherwise. Untimed then counts the keys
	// that draw no glyph of their own (Return), and Tail those typed in
	// the typing's last key timeout; neither is timed.
	Method  string `json:"method,omitempty"`
	Untimed int    `json:"untimed,omitempty"`
	Tail    int    `json:"tail,omitempty"`
}

// attributePixels times each key typed at keys (in order) to the first of
// changes after it and before the next key, and finds the key press it
// became among tunnelKeys (the tunnel's key times, any order), with that
// press's key-to-draw from draws (by the press's time; absent when it was
// not measured). All times are on one clock. A key with no change is
// unanswered, and the one after it is not timed.
func attributePixels(keys, changes, tunnelKeys []time.Duration, draws map[time.Duration]time.Duration) []PixelKey {
	cs := slices.Clone(changes)
	slices.Sort(cs)
	tk := slices.Clone(tunnelKeys)
	slices.Sort(tk)
	out := make([]PixelKey, len(keys))
	prevAnswered := true
	for i, t := range keys {
		next := time.Duration(math.MaxInt64)
		if i+1 < len(keys) {
			next = keys[i+1]
		}
		k := PixelKey{At: t, Pixel: -1, Tunnel: -1, Draw: -1}
		c, _ := slices.BinarySearch(cs, t)
		switch {
		case c == len(cs) || cs[c] >= next:
			k.Unanswered, prevAnswered = true, false
		case !prevAnswered:
			prevAnswered = true
		default:
			k.Pixel = cs[c] - t
		}
		if j, _ := slices.BinarySearch(tk, t); j < len(tk) && tk[j] < next {
			k.Tunnel = tk[j] - t
			if d, ok := draws[tk[j]]; ok {
				k.Draw = d
			}
		}
		out[i] = k
	}
	return out
}

// analysePixels reads the key-to-pixel figure from what the client role
// captured, the client end's trace tr and the run's key-to-draw analysis a
// (read from tr with typing started at typingStart), leaving out of the
// figures the keys typed in the first warmup of the typing.
func analysePixels(pc PixelCapture, tr *spicetrace.Trace, a Analysis, typingStart, warmup time.Duration) PixelAnalysis {
	var p PixelAnalysis
	keys := make([]time.Duration, len(pc.Keys))
	for i, k := range pc.Keys {
		keys[i] = k.T
		p.MaxSync = max(p.MaxSync, k.Synced-k.T)
	}
	changes := make([]time.Duration, len(pc.Changes))
	for i, c := range pc.Changes {
		changes[i] = c.T
	}
	draws := map[time.Duration]time.Duration{}
	for _, s := range a.Samples {
		draws[typingStart+s.Offset] = s.RTT
	}
	p.Keys = attributePixels(keys, changes, tunnelKeyTimes(tr, typingStart), draws)
	p.Typed, p.Area = len(p.Keys), pc.Area
	for i := range p.Keys {
		k := &p.Keys[i]
		k.At -= typingStart
		switch {
		case k.Unanswered:
			p.Unanswered++
		case k.Pixel < 0:
			p.AfterUnanswered++
		}
	}
	p.figures(warmup)
	return p
}

// figures sets the spreads and Early from the keys typed after warmup
// that have both key-to-pixel and key-to-draw.
func (p *PixelAnalysis) figures(warmup time.Duration) {
	var diff, in, out, pix []time.Duration
	for i := range p.Keys {
		k := &p.Keys[i]
		if k.At < warmup || k.Pixel < 0 || k.Draw < 0 {
			continue
		}
		diff = append(diff, k.Pixel-k.Draw)
		in = append(in, k.Tunnel)
		out = append(out, k.Pixel-k.Tunnel-k.Draw)
		pix = append(pix, k.Pixel)
		if k.Pixel-k.Tunnel-k.Draw < -PixelTolerance {
			p.Early++
		}
	}
	p.Diff, p.Input, p.Output, p.Pixel = spreadOf(diff), spreadOf(in), spreadOf(out), spreadOf(pix)
}

// typingStart on, as Analyse takes them.
func tunnelKeyTimes(tr *spicetrace.Trace, typingStart time.Duration) []time.Duration {
	var out []time.Duration
	for _, r := range tr.Records {
		if r.T >= typingStart && r.Key != nil && r.Key.Down && r.Dir == spicetrace.ClientToServer {
			out = append(out, r.T)
		}
	}
	return out
}

func spreadOf(xs []time.Duration) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	p := func(q float64) time.Duration { v, _ := stats.Percentile(xs, q); return v }
	return Spread{Min: slices.Min(xs), P25: p(25), P50: p(50), P75: p(75), Max: slices.Max(xs), N: len(xs)}
}

// checkArea checks that area, found in spicy's window, has the shape of
// the typing xterm's rectangle on the guest's screen, as it must if it is
// that xterm shown scaled, and returns the scale.
func checkArea(area, typing spicetrace.Rect) (float64, error) {
	aw, ah := float64(area.Right-area.Left), float64(area.Bottom-area.Top)
	tw, th := float64(typing.Right-typing.Left), float64(typing.Bottom-typing.Top)
	if aw <= 0 || ah <= 0 || tw <= 0 || th <= 0 {
		return 0, fmt.Errorf("the typing area %+v in spicy's window, or the typing xterm %+v, is empty", area, typing)
	}
	sx, sy := aw/tw, ah/th
	// A scaled edge can gain or lose a pixel or two.
	if math.Abs(sx-sy) > 0.03*max(sx, sy)+2/min(tw, th) {
		return 0, fmt.Errorf("the white area found in spicy's window, %vx%v at %d,%d, is not the typing xterm (%vx%v on the guest's screen) scaled: "+
			"scales %.3f and %.3f across and down; see the run's screenshot", aw, ah, area.Left, area.Top, tw, th, sx, sy)
	}
	return (sx + sy) / 2, nil
}

// AnalyseCapture is a live run's key-to-pixel figure from pc, the client
// role's capture, and tr, the client end's trace: by glyph when byGlyph (a
// run with a display workload) and pc has the changed rectangles, else
// each key's first change before the next (analysePixels, from a, the
// run's key-to-draw figure). typing is the typing xterm on the guest's
// screen, which pc.Area must show scaled.
func AnalyseCapture(pc PixelCapture, tr *spicetrace.Trace, a Analysis, typing spicetrace.Rect, byGlyph bool,
	typingStart, typingEnd, answersEnd, timeout, warmup time.Duration) (PixelAnalysis, error) {
	scale, err := checkArea(pc.Area, typing)
	if err != nil {
		return PixelAnalysis{}, err
	}
	var p PixelAnalysis
	if byGlyph && hasChangedRects(pc) {
		p = analysePixelGlyphs(pc, tr, typing, typingStart, typingEnd, answersEnd, timeout, warmup)
	} else {
		p = analysePixels(pc, tr, a, typingStart, warmup)
	}
	p.Scale = scale
	return p, nil
}

// hasChangedRects says whether every change in pc has its Changed
// rectangle, as captures made since it was recorded have.
func hasChangedRects(pc PixelCapture) bool {
	return !slices.ContainsFunc(pc.Changes, func(c PixelChange) bool { return len(c.Changed) == 0 })
}
