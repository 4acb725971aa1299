package spicelive_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
)

// Two keys typed 500 ms apart. The first one's press passed the tunnel
// 8 ms after it was typed, its draw 40 ms after that, and spicy's window
// changed twice (glyph, then cursor) after it: key-to-pixel is the first
// change. The second key's window did not change before the third key
// was typed: it is unanswered, and the third is not timed, as its change
// may be the second's late answer.
func ExampleAttributePixels() {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	typed := []time.Duration{ms(1000), ms(1500), ms(2000)}
	changes := []time.Duration{ms(1051), ms(1053), ms(2060)}
	tunnel := []time.Duration{ms(1008), ms(1509), ms(2008)}
	draws := map[time.Duration]time.Duration{ms(1008): ms(40), ms(2008): ms(45)}
	for _, k := range spicelive.AttributePixels(typed, changes, tunnel, draws) {
		fmt.Printf("key at %v: key-to-pixel %v, key-to-draw %v, unanswered %v\n", k.At, k.Pixel, k.Draw, k.Unanswered)
	}
	// Output:
	// key at 1s: key-to-pixel 51ms, key-to-draw 40ms, unanswered false
	// key at 1.5s: key-to-pixel -1ns, key-to-draw -1ns, unanswered true
	// key at 2s: key-to-pixel -1ns, key-to-draw 45ms, unanswered false
}
