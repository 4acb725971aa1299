// Package keydraw times the keys of a live SPICE session to their draws:
// key-to-draw from the tunnel client end's trace, key-to-pixel from spicy's
// window, and the parts of each key's time that the two tunnel ends'
// traces tell apart.
//
// Analyse reads a trace whose typing xterm shows a cursor: each key press
// on the inputs channel is answered by the first draw over the typing
// xterm before the next key, and the busy xterm's draws are left out.
// AnalyseGlyphs reads a session with a display workload, whose typing
// xterm hides its cursor: each key is timed to the draw of its own glyph
// within a timeout, so keys may overlap, and a key never answered counts
// at the timeout (Analysis.Censored).
//
// On the client, a PixelWatch types the keys itself through XTEST and
// watches the typing xterm's pixels in spicy's window (DAMAGE, each damaged
// rectangle read back), writing a PixelCapture; AnalyseCapture pairs the
// keys with their pixel changes, by glyph or by the first change after
// each key, into a PixelAnalysis beside key-to-draw. KeyPaths splits each
// timed key into up, inside spice-server and down.
//
// Use, with a live run's client trace (spicelive.ReadTrace of its
// spicelive.ClientTrace):
//
//	typing := spicetrace.Rect{Right: 484, Bottom: 316}
//	busy := spicetrace.Rect{Top: 400, Right: 484, Bottom: 534}
//	a := keydraw.Analyse(clientTrace, typing, busy, from)
//	fmt.Println(a.Samples) // each key's offset and key-to-draw

package keydraw
