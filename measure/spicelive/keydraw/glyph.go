package keydraw

import (
	"cmp"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// The typing xterm's text area: its geometry's columns and rows (the
// typingGeometry), and the PC scancode of Return, which starts a line.
const (
	typingCols     = 80
	typingRows     = 24
	scancodeReturn = 28
	// keysPerLine is how many keys the client types on a line: 40 letters,
	// then Return.
	keysPerLine = 41
)

// MaxGlyphKeys is how many keys a run with a display workload may type:
// its glyphs must all fit on the typing xterm without scrolling, which
// would redraw every glyph at once.
const MaxGlyphKeys = (typingRows - 1) * keysPerLine

// AnalyseGlyphs reads key-to-draw intervals from a client-end trace by
// attributing each draw to the keys whose glyphs it paints, so that keys
// may overlap: a key answered after the next was pressed is still timed.
// Keys are taken in time order from typingStart: a letter's glyph goes in
// the next cell of the line, Return starts the next line and is not timed.
// A key's draw is the first display message after it that draws over the
// middle of its glyph's cell. A key not answered within timeout is in
// Censored at the timeout. With answersEnd zero, only keys pressed before
// typingEnd less timeout are timed and later ones are counted in Tail;
// with answersEnd, every key pressed before typingEnd is timed, and only
// one unanswered and pressed after answersEnd less timeout is in Tail.
func AnalyseGlyphs(tr *spicetrace.Trace, typing, busy spicetrace.Rect, typingStart, typingEnd, answersEnd, timeout time.Duration) Analysis {
	a := Analysis{Method: MethodGlyph}
	keys, draws := keysAndDraws(tr, typing, busy, typingStart, &a)
	at := func(i int) time.Duration { return tr.Records[i].T }
	echoOf := map[int]int{} // draw → how many keys it answered
	var pairs [][2]int
	for n, g := range glyphKeys(tr, keys, typing, tailFrom(typingEnd, answersEnd, timeout), timeout) {
		k := g.rec
		// The first draw after the key.
		first, _ := slices.BinarySearchFunc(draws, at(k)+1, func(d int, t time.Duration) int { return cmp.Compare(at(d), t) })
		if first < len(draws) {
			if d := at(draws[first]) - at(k); a.AllDrawsMin < 0 || d < a.AllDrawsMin {
				a.AllDrawsMin = d
			}
		}
		switch g.state {
		case glyphUntimed:
			a.Untimed++
			continue
		case glyphTail:
			a.Tail++
			continue
		}
		echo := -1
		for _, d := range draws[first:] {
			if at(d)-at(k) > timeout {
				break
			}
			if b := tr.Records[d].Draw.Box; int(b.Left) <= g.x && g.x < int(b.Right) && int(b.Top) <= g.y && g.y < int(b.Bottom) {
				echo = d
				break
			}
		}
		if echo < 0 && answersEnd > 0 && at(k) >= answersEnd-timeout {
			a.Tail++
			continue
		}
		if echo < 0 {
			a.Unanswered++
			a.UnansweredAt = append(a.UnansweredAt, at(k)-typingStart)
			a.Censored = append(a.Censored, stats.Sample{Offset: at(k) - typingStart, RTT: timeout})
			continue
		}
		a.Samples = append(a.Samples, stats.Sample{Offset: at(k) - typingStart, RTT: at(echo) - at(k)})
		a.sampled = append(a.sampled, [2]int{k, echo})
		echoOf[echo]++
		var next time.Duration = 1<<63 - 1
		if n+1 < len(keys) {
			next = at(keys[n+1])
		}
		if at(echo) < next {
			pairs = append(pairs, [2]int{k, echo})
		}
	}
	if a.AllDrawsMin < 0 {
		a.AllDrawsMin = 0
	}
	// A replay pairs each echo with the key before it: only keys answered
	// alone and before the next key are tagged.
	for _, p := range pairs {
		if echoOf[p[1]] == 1 {
			a.keyIdx = append(a.keyIdx, p[0])
			a.echoIdx = append(a.echoIdx, p[1])
		}
	}
	return a
}

// The states of a glyphKey: timed, not timed because it draws no glyph of
// its own (Return, or a key after the xterm scrolled), or not timed
// because it was pressed in the typing's last timeout.
const (
	glyphTimed = iota
	glyphUntimed
	glyphTail
)

// glyphKey is a key press at the tunnel as AnalyseGlyphs reads it.
type glyphKey struct {
	rec   int // the press's record in the trace
	code  uint32
	state int
	// x and y are the middle of the key's glyph's cell on the guest's
	// screen, for a timed key.
	x, y int
}

// tailFrom is when the keys glyphKeys leaves untimed begin: the typing's
// last timeout, or with a wait for answers after the typing, its end.
func tailFrom(typingEnd, answersEnd, timeout time.Duration) time.Duration {
	if answersEnd > 0 {
		return typingEnd
	}
	return typingEnd - timeout
}

// glyphKeys places the key presses keys (records of tr, in time order)
// in the typing xterm's cells and says which are timed, as AnalyseGlyphs
// does: those pressed from tail on are not.
func glyphKeys(tr *spicetrace.Trace, keys []int, typing spicetrace.Rect, tail, timeout time.Duration) []glyphKey {
	cellW, cellH := int(typing.Right-typing.Left)/typingCols, int(typing.Bottom-typing.Top)/typingRows
	// The text area is centred in the window, less a pixel of border on
	// each side; the middle of a cell is then off by at most a pixel.
	padX, padY := (int(typing.Right-typing.Left)-typingCols*cellW)/2+1, (int(typing.Bottom-typing.Top)-typingRows*cellH)/2+1
	row, col := 0, 0
	out := make([]glyphKey, len(keys))
	for n, k := range keys {
		r := tr.Records[k]
		g := glyphKey{rec: k, code: r.Key.Code, state: glyphUntimed}
		out[n] = g
		if r.Key.Code == scancodeReturn {
			row, col = row+1, 0
			continue
		}
		g.x = int(typing.Left) + padX + col*cellW + cellW/2
		g.y = int(typing.Top) + padY + row*cellH + cellH/2
		if col++; col == typingCols {
			row, col = row+1, 0
		}
		switch {
		case row >= typingRows:
			// The xterm scrolled: every cell is redrawn.
			g.x, g.y = 0, 0
		case r.T >= tail:
			g.state = glyphTail
		default:
			g.state = glyphTimed
		}
		out[n] = g
	}
	return out
}

// MethodGlyph is Analysis.Method for AnalyseGlyphs.
const MethodGlyph = "glyph"
