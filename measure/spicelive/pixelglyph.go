package spicelive

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// AnalysePixelGlyphs reads the key-to-pixel figure of a run with a display
// workload, whose keys may be drawn after the next key was typed, by
// glyph as AnalyseGlyphs reads key-to-draw: pc is what the client role
// captured (with each change's Changed rectangle), tr the client end's
// trace, typing the typing xterm on the guest's screen, and typing
// started at typingStart and ended at typingEnd (trace times); keys
// typed in the first warmup are left out of the figures.
//
// Each typed key is paired, in order, with its press at the tunnel: the
// next press after it was typed, if its scancode is the key's; a key
// with none never reached the guest. The press's glyph cell, whether it
// is timed, and its key-to-draw are AnalyseGlyphs'. A timed key's pixel
// is the first change at or after it was typed, within timeout, whose
// Changed rectangles cover the middle of that cell as spicy shows it
// (guestToWindow); a key with none, or that never reached the guest, is
// unanswered.
func AnalysePixelGlyphs(pc PixelCapture, tr *spicetrace.Trace, typing spicetrace.Rect, typingStart, typingEnd, answersEnd, timeout, warmup time.Duration) PixelAnalysis {
	p := PixelAnalysis{Method: MethodGlyph, Area: pc.Area, Typed: len(pc.Keys)}
	var a Analysis
	keys, _ := keysAndDraws(tr, typing, spicetrace.Rect{}, typingStart, &a)
	tail := tailFrom(typingEnd, answersEnd, timeout)
	gks := glyphKeys(tr, keys, typing, tail, timeout)
	draws := map[time.Duration]time.Duration{}
	for _, s := range AnalyseGlyphs(tr, typing, spicetrace.Rect{}, typingStart, typingEnd, answersEnd, timeout).Samples {
		draws[typingStart+s.Offset] = s.RTT
	}
	toWindow := guestToWindow(typing, pc.Area)
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

// guestToWindow maps a pixel of the guest's screen inside the typing
// xterm (typing, its rectangle on the guest's screen) to the pixel of
// spicy's window that shows its middle, from area, the xterm's white area
// as found in the window (findArea). The xterm's inside starts a pixel of
// border in from typing's top left; the white area's edges are the
// pixels that are wholly white, so they lie within a pixel of the scaled
// inside's edges, half a pixel in on average.
func guestToWindow(typing, area spicetrace.Rect) func(x, y int) (int, int) {
	sx := (float64(area.Right-area.Left) + 1) / float64(typing.Right-typing.Left)
	sy := (float64(area.Bottom-area.Top) + 1) / float64(typing.Bottom-typing.Top)
	return func(x, y int) (int, int) {
		wx := float64(area.Left) - 0.5 + (float64(x-int(typing.Left)-1)+0.5)*sx
		wy := float64(area.Top) - 0.5 + (float64(y-int(typing.Top)-1)+0.5)*sy
		return int(math.Floor(wx)), int(math.Floor(wy))
	}
}

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
