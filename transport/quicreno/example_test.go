package quicreno_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/transport/quicreno"
)

// The settings a record carries beside the controller's name.
func ExampleParams_String() {
	p := quicreno.Defaults()
	fmt.Println(quicreno.Name, p)
	p.BetaPercent, p.InitialWindow, p.Pacing = 50, 10, false
	fmt.Println(quicreno.Name, p)
	// Output:
	// quicreno iw=32 beta=0.70 min=2 hystart pacing keep-on-rto undo
	// quicreno iw=10 beta=0.50 min=2 hystart no-pacing keep-on-rto undo
}
