package keydraw

import (
	"cmp"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// Analysis is the key-to-draw figure of one live session, read from the
// client end's trace.
//
// A key is a key press on the inputs channel (key_down, or a key_scancode
// whose first scancode is a press) sent at or after the typing started.
// Its draw is the first display message, after it and before the next
// key, that draws on the primary surface (the screen) inside the typing
// area. Its interval is the draw's time minus the key's, both as the
// client end of the tunnel saw them (the last byte of each message read).
// Draws anywhere else, in the busy area in particular, are not counted.
type Analysis struct {
	// Samples are the measured keys: Offset from the typing's start, RTT
	// the key-to-draw interval.
	Samples []stats.Sample `json:"samples"`
	// Keys counts the key presses in the typing period.
	Keys int `json:"keys"`
	// Unanswered counts keys with no draw of the typing area before the
	// next key (or before the trace ends, for the last), and the NotSent
	// keys; the offsets of the first kind are in UnansweredAt. They are the
	// live figure's timeouts.
	Unanswered   int             `json:"unanswered"`
	UnansweredAt []time.Duration `json:"unanswered_at,omitempty"`
	// Censored are, with a display workload (AnalyseGlyphs), the
	// unanswered keys that had the whole timeout, each at the timeout: a
	// run's percentiles count them there, as at least that long.
	Censored []stats.Sample `json:"censored,omitempty"`
	// Typed counts the keys typed into the client's screen; NotSent those
	// of them that never reached the tunnel (Typed less Keys).
	Typed   int `json:"typed"`
	NotSent int `json:"not_sent"`
	// AfterUnanswered counts keys not measured because the key before them
	// went unanswered: the first draw after them may be the late answer to
	// that key, so it would time the wrong key.
	AfterUnanswered int `json:"after_unanswered"`
	// TypingDraws, BusyDraws and OtherDraws count the display's draws on
	// the primary surface during the typing: in the typing area, in the
	// busy area (and not the typing area), elsewhere.
	TypingDraws int `json:"typing_draws"`
	BusyDraws   int `json:"busy_draws"`
	OtherDraws  int `json:"other_draws"`
	// AllDrawsMin is the shortest interval from a key to the next draw of
	// any area: the figure if the busy area's draws were counted. The
	// control expects it below the measured figure's minimum.
	AllDrawsMin time.Duration `json:"all_draws_min_ns"`
	// Method is MethodGlyph for AnalyseGlyphs, empty for Analyse. Untimed
	// counts the keys AnalyseGlyphs does not time because they draw no
	// glyph of their own (Return), and Tail those pressed too near the
	// typing's end to have had the whole timeout.
	Method  string `json:"method,omitempty"`
	Untimed int    `json:"untimed,omitempty"`
	Tail    int    `json:"tail,omitempty"`

	// keyIdx and echoIdx are the records of each measured key and its
	// draw, for tagging a trace for a replay.
	keyIdx, echoIdx []int
	// sampled are the records of each sample's key and draw, in Samples'
	// order.
	sampled [][2]int
}

// Analyse reads the key-to-draw intervals from a client-end trace: keys
// from typingStart (the trace's time) on, typing the area typing, with the
// area busy redrawn all the while.
func Analyse(tr *spicetrace.Trace, typing, busy spicetrace.Rect, typingStart time.Duration) Analysis {
	var a Analysis
	keys, draws := keysAndDraws(tr, typing, busy, typingStart, &a)
	at := func(i int) time.Duration { return tr.Records[i].T }
	prevAnswered := true
	for n, k := range keys {
		next := time.Duration(1<<63 - 1)
		if n+1 < len(keys) {
			next = at(keys[n+1])
		}
		first := slices.IndexFunc(draws, func(d int) bool { return at(d) > at(k) })
		echo := -1
		for j := first; j >= 0 && j < len(draws) && at(draws[j]) < next; j++ {
			d := draws[j]
			if j == first && (a.AllDrawsMin < 0 || at(d)-at(k) < a.AllDrawsMin) {
				a.AllDrawsMin = at(d) - at(k)
			}
			if tr.Records[d].Draw.Box.Intersects(typing) {
				echo = d
				break
			}
		}
		switch {
		case echo < 0:
			a.Unanswered++
			a.UnansweredAt = append(a.UnansweredAt, at(k)-typingStart)
			prevAnswered = false
		case !prevAnswered:
			a.AfterUnanswered++
			prevAnswered = true
		default:
			a.Samples = append(a.Samples, stats.Sample{Offset: at(k) - typingStart, RTT: at(echo) - at(k)})
			a.sampled = append(a.sampled, [2]int{k, echo})
			a.keyIdx = append(a.keyIdx, k)
			a.echoIdx = append(a.echoIdx, echo)
		}
	}
	if a.AllDrawsMin < 0 {
		a.AllDrawsMin = 0
	}
	return a
}

// CountTyped records that typed keys were typed, and counts those that
// never reached the tunnel as unanswered. It returns how many did not.
func (a *Analysis) CountTyped(typed int) int {
	a.Typed = typed
	a.NotSent = max(0, typed-a.Keys)
	a.Unanswered += a.NotSent
	return a.NotSent
}

// Tag labels the measured keys and their draws in tr (the trace a was
// read from) for spicelike.ReplayFromTraces.
func (a Analysis) Tag(tr *spicetrace.Trace) {
	for _, i := range a.keyIdx {
		tr.Records[i].Tag = spicelike.TagKey
	}
	for _, i := range a.echoIdx {
		tr.Records[i].Tag = spicelike.TagEcho
	}
}

// keysAndDraws returns the indexes of the key presses and primary draws in
// tr from typingStart on, each in time order (records are in the order
// the trace was written, which concurrent relays can leave slightly out
// of time order), and counts the draws by area and the keys into a.
func keysAndDraws(tr *spicetrace.Trace, typing, busy spicetrace.Rect, typingStart time.Duration, a *Analysis) (keys, draws []int) {
	for i, r := range tr.Records {
		switch {
		case r.T < typingStart:
		case r.Key != nil && r.Key.Down && r.Dir == spicetrace.ClientToServer:
			keys = append(keys, i)
		case r.Draw != nil && r.Draw.Primary && r.Dir == spicetrace.ServerToClient:
			draws = append(draws, i)
			switch {
			case r.Draw.Box.Intersects(typing):
				a.TypingDraws++
			case r.Draw.Box.Intersects(busy):
				a.BusyDraws++
			default:
				a.OtherDraws++
			}
		}
	}
	byTime := func(x, y int) int { return cmp.Compare(tr.Records[x].T, tr.Records[y].T) }
	slices.SortStableFunc(keys, byTime)
	slices.SortStableFunc(draws, byTime)
	a.Keys = len(keys)
	a.AllDrawsMin = -1
	return keys, draws
}
