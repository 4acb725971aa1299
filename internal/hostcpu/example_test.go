package hostcpu_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/internal/hostcpu"
)

func ExampleBetween() {
	a := hostcpu.Times{Busy: 1000, Idle: 9000}
	b := hostcpu.Times{Busy: 1300, Idle: 9600, Steal: 100}
	u := hostcpu.Between(a, b)
	fmt.Printf("busy %.0f%%, stolen %.0f%%\n", 100*u.Busy, 100*u.Steal)
	// Output: busy 30%, stolen 10%
}
