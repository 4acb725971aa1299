package keydraw

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// analysePixelGlyphs reads the key-to-pixel figure of a run with a
// display workload by glyph, as AnalyseGlyphs reads key-to-draw: pc is the
// client role's capture (with each change's Changed rectangles), tr the
// client end's trace, typing the typing xterm on the guest's screen; keys
// typed in the first warmup after typingStart are left out of the figures.
// Each typed key is paired, in order, with the next press at the tunnel if
// its scancode is the key's (else it never reached the guest). A timed
// key's pixel is the first change at or after it was typed, within
// timeout, whose Changed rectangles cover the middle of its glyph's cell
// as spicy shows it (xwindow.GuestToWindow); a key with none is unanswered.
func analysePixelGlyphs(pc PixelCapture, tr *spicetrace.Trace, typing spicetrace.Rect, typingStart, typingEnd, answersEnd, timeout, warmup time.Duration) PixelAnalysis {
	p := PixelAnalysis{Method: MethodGlyph, Area: pc.Area, Typed: len(pc.Keys)}
	var a Analysis
	keys, _ := keysAndDraws(tr, typing, spicetrace.Rect{}, typingStart, &a)
	tail := tailFrom(typingEnd, answersEnd, timeout)
	gks := glyphKeys(tr, keys, typing, tail, timeout)
	draws := map[time.Duration]time.Duration{}
	for _, s := range AnalyseGlyphs(tr, typing, spicetrace.Rect{}, typingStart, typingEnd, answersEnd, timeout).Samples {
		draws[typingStart+s.Offset] = s.RTT
	}
	toWindow := xwindow.GuestToWindow(typing, pc.Area)
	changes := slices.Clone(pc.Changes)
	slices.SortStableFunc(changes, func(x, y PixelChange) int { return cmp.Compare(x.T, y.T) })
	j := 0 // the next press to pair
	for _, tk := range pc.Keys {
		p.MaxSync = max(p.MaxSync, tk.Synced-tk.T)
		k := PixelKey{At: tk.T - typingStart, Pixel: -1, Tunnel: -1, Draw: -1}
		for j < len(gks) && tr.Records[gks[j].rec].T < tk.T {
			j++ // a press before the key was typed is not its
		}
		var g *glyphKey
		if code, ok := keyScancodes[tk.Key]; ok && j < len(gks) && gks[j].code == code {
			g = &gks[j]
			j++
		}
		switch {
		case g == nil && tk.T >= tail, g != nil && g.state == glyphTail:
			p.Tail++
		case g != nil && g.state == glyphUntimed:
			p.Untimed++
		case g == nil && tk.Key == "Return":
			p.Untimed++
		case g == nil:
			k.Unanswered = true
			p.Unanswered++
		default:
			x, y := toWindow(g.x, g.y)
			first, _ := slices.BinarySearchFunc(changes, tk.T, func(c PixelChange, t time.Duration) int { return cmp.Compare(c.T, t) })
			for _, c := range changes[first:] {
				if c.T-tk.T > timeout {
					break
				}
				if slices.ContainsFunc(c.Changed, func(b spicetrace.Rect) bool {
					return int(b.Left) <= x && x < int(b.Right) && int(b.Top) <= y && y < int(b.Bottom)
				}) {
					k.Pixel = c.T - tk.T
					break
				}
			}
			if k.Pixel < 0 {
				k.Unanswered = true
				p.Unanswered++
			}
		}
		if g != nil {
			t := tr.Records[g.rec].T
			k.Tunnel = t - tk.T
			if d, ok := draws[t]; ok {
				k.Draw = d
			}
		}
		p.Keys = append(p.Keys, k)
	}
	p.figures(warmup)
	return p
}

// keyScancodes are the PC scancodes of the keys the rig types, as a key
// press carries them through the tunnel.
var keyScancodes = func() map[string]uint32 {
	m := map[string]uint32{"Return": scancodeReturn}
	for i, row := range []string{"qwertyuiop", "asdfghjkl", "zxcvbnm"} {
		for n, r := range row {
			m[string(r)] = uint32([]int{0x10, 0x1e, 0x2c}[i] + n)
		}
	}
	return m
}()

// changedGap is the widest run of unchanged rows or columns of spicy's
// window that changedRects keeps inside one rectangle: narrower than a
// glyph's cell as spicy shows it.
const changedGap = 2

// changedRects are the rectangles of the pixels (4 bytes each) that
// differ between a and b, two readings of area, in the window's
// coordinates; none when no pixel differs. The changed rows are cut into
// bands at runs of more than changedGap unchanged rows, each band into
// pieces at such runs of unchanged columns, and each piece is cut down to
// the rows changed in it: glyphs drawn at the end of one line and the
// start of the next come out as two rectangles, not one over both lines.
func changedRects(a, b []byte, area spicetrace.Rect) []spicetrace.Rect {
	w, h := int(area.Right-area.Left), int(area.Bottom-area.Top)
	diff := func(x, y int) bool {
		i := 4 * (y*w + x)
		return !bytes.Equal(a[i:i+4], b[i:i+4])
	}
	rowChanged := make([]bool, h)
	for y := range h {
		rowChanged[y] = !bytes.Equal(a[4*y*w:4*(y+1)*w], b[4*y*w:4*(y+1)*w])
	}
	var out []spicetrace.Rect
	for _, band := range runs(h, func(y int) bool { return rowChanged[y] }) {
		colChanged := func(x int) bool {
			for y := band[0]; y < band[1]; y++ {
				if rowChanged[y] && diff(x, y) {
					return true
				}
			}
			return false
		}
		for _, cols := range runs(w, colChanged) {
			top, bottom := -1, 0
			for y := band[0]; y < band[1]; y++ {
				for x := cols[0]; x < cols[1]; x++ {
					if diff(x, y) {
						if top < 0 {
							top = y
						}
						bottom = y + 1
						break
					}
				}
			}
			out = append(out, spicetrace.Rect{Top: area.Top + int32(top), Left: area.Left + int32(cols[0]),
				Bottom: area.Top + int32(bottom), Right: area.Left + int32(cols[1])})
		}
	}
	return out
}

// runs are the half-open spans of [0, n) where changed holds, joined
// across gaps of at most changedGap.
func runs(n int, changed func(int) bool) [][2]int {
	var out [][2]int
	for i := 0; i < n; i++ {
		if !changed(i) {
			continue
		}
		if l := len(out) - 1; l >= 0 && i-out[l][1] <= changedGap {
			out[l][1] = i + 1
		} else {
			out = append(out, [2]int{i, i + 1})
		}
	}
	return out
}

// tunnelKeyTimes are the key presses' times in a client-end trace from
