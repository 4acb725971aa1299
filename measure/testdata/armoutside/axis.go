// Package armoutside is a user's module that defines arms of its own (a TCP
// one and a QUIC one, in its test) and an axis of its own (EchoSizes, run by
// the command cmd/echosizes), and measures them beside the built-in arms in
// small matrices (package plan, run by package bench), summaries included.
package armoutside

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/plan"
)

// EchoSizes is this module's own axis: each size, in bytes, of the
// interactive channel's request and echo (spicelike.Config.EchoSize) is a
// cell of its own, named "_echo-64" in its directory and "echo 64" in its title.
func EchoSizes(sizes []int) plan.Axis {
	texts := make([]string, len(sizes))
	for i, n := range sizes {
		texts[i] = strconv.Itoa(n)
	}
	return plan.NewAxis("echo", texts, func(r *plan.Run, v string) {
		r.Workload.EchoSize, _ = strconv.Atoi(v) // v is one of texts
	})
}

// EchoSizesFlag is -echo-sizes (env ECHO_SIZES), the EchoSizes axis with
// the default sizes def; each size must be 16 to 65535 bytes.
func EchoSizesFlag(def string) benchcmd.AxisFlag {
	return benchcmd.AxisFlag{Name: "echo-sizes", Env: "ECHO_SIZES", Default: def,
		Help: "sizes in bytes of the interactive request and its echo, one cell each, space-separated",
		Set: func(m *plan.Matrix, text string) error {
			var sizes []int
			for _, f := range strings.Fields(text) {
				n, err := strconv.Atoi(f)
				if err != nil || n < 16 || n > 65535 {
					return fmt.Errorf("-echo-sizes: %q is not a size from 16 to 65535 bytes", f)
				}
				sizes = append(sizes, n)
			}
			if len(sizes) == 0 {
				return errors.New("-echo-sizes is empty: give at least one size, such as \"64 1024\"")
			}
			m.Axes = append(m.Axes, EchoSizes(sizes))
			return nil
		}}
}
