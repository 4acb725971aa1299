package calibrate

import (
	"context"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// sweep is one rate of the highest-rate search: a BBR and a Cubic flow,
// both asking for large buffers, over a fresh 5 ms link at rateMbit, with
// the emulator's CPU time per frame across both.
func sweep(ctx context.Context, c Config, rateMbit float64, opts shapedlink.Options) Sweep {
	s := Sweep{RateMbit: rateMbit}
	p, err := shapedlink.NewProfile(5*time.Millisecond, rateMbit, 0)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer l.Close()
	cpu0, pk0 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	s.Bulk = bulk(ctx, l, "bbr", true, c.Bulk, rateMbit*1e6)
	s.Cubic = bulk(ctx, l, "cubic", true, c.Bulk, rateMbit*1e6)
	cpu1, pk1 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	if cpu0 >= 0 && cpu1 > cpu0 && pk1 > pk0 {
		s.CPUNs = float64(cpu1-cpu0) / float64(pk1-pk0)
	}
	return s
}
