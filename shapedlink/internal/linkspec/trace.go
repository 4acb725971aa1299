package linkspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Trace is Mahimahi's trace format for one direction's rate (profile
// option trace=SPEC): each line a time in milliseconds at which one
// 1500-byte delivery opportunity occurs, times never decreasing; the trace
// repeats with the last time as its period. The link delivers by
// mm-link's rule, and a trace replaces the direction's rate, which netem
// cannot do: the emulator and the in-process link carry it. SPEC is a
// file, const:MBIT (evenly spaced opportunities) or cell:MBIT/CV[/SEED]
// (a cellular-like rate of mean MBIT). docs/link-description.md,
// "Schedules and traces", has the rule and the generators.
type Trace struct {
	Spec string
	// Ms are the opportunity times in milliseconds, never decreasing;
	// the last is the period.
	Ms []uint32
}

// TraceOpportunity is the bytes one delivery opportunity carries.
const TraceOpportunity = 1500

// MaxTraceLines bounds a trace's length (a period of five minutes at
// 100 Mbit/s).
const MaxTraceLines = 2_500_000

// LoadTrace reads or generates a trace (see Trace).
func LoadTrace(spec string) (Trace, error) {
	t := Trace{Spec: spec}
	kind, args, _ := strings.Cut(spec, ":")
	var err error
	switch kind {
	case "const":
		err = t.constant(args)
	case "cell":
		err = t.cell(args)
	default:
		err = t.readFile(spec)
	}
	if err != nil {
		return Trace{}, fmt.Errorf("shapedlink: trace %q %w", spec, err)
	}
	return t, nil
}

// MeanMbit is the trace's mean rate over its period.
func (t Trace) MeanMbit() float64 {
	if len(t.Ms) == 0 || t.Ms[len(t.Ms)-1] == 0 {
		return 0
	}
	return float64(len(t.Ms)) * TraceOpportunity * 8 / float64(t.Ms[len(t.Ms)-1]) / 1e3
}

// Period is the time after which the trace repeats.
func (t Trace) Period() time.Duration {
	if len(t.Ms) == 0 {
		return 0
	}
	return time.Duration(t.Ms[len(t.Ms)-1]) * time.Millisecond
}

// Opportunities counts the trace's opportunities in [from, to), the trace
// repeating from time zero.
func (t Trace) Opportunities(from, to time.Duration) int {
	period := t.Period()
	if period <= 0 {
		return 0
	}
	n := 0
	for c := from / period * period; c < to; c += period {
		for _, ms := range t.Ms {
			if at := c + time.Duration(ms)*time.Millisecond; at >= from && at < to {
				n++
			}
		}
	}
	return n
}

// Format is t in Mahimahi's format, one time per line.
func (t Trace) Format() string {
	var b strings.Builder
	for _, ms := range t.Ms {
		b.WriteString(strconv.FormatUint(uint64(ms), 10))
		b.WriteByte('\n')
	}
	return b.String()
}

func (t *Trace) readFile(path string) error {
	b, err := readSpecFile(path, 11*MaxTraceLines)
	if err != nil {
		return fmt.Errorf("is not a generator (const:MBIT, cell:MBIT/CV[/SEED]) and %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > MaxTraceLines {
		return fmt.Errorf("has %d lines; at most %d", len(lines), MaxTraceLines)
	}
	var last uint64
	for i, line := range lines {
		ms, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32)
		if err != nil {
			return fmt.Errorf("line %d %q is not a time in whole milliseconds", i+1, line)
		}
		if ms < last {
			return fmt.Errorf("line %d goes back in time (%d after %d); times must never decrease", i+1, ms, last)
		}
		last = ms
		t.Ms = append(t.Ms, uint32(ms))
	}
	if last == 0 {
		return fmt.Errorf("lasts no time (its last line is 0); the last time is the period")
	}
	return nil
}

// constant spreads opportunities evenly over a 10 s period (long, so the
// closing opportunity spread adds is a negligible excess).
func (t *Trace) constant(args string) error {
	mbit, err := parseDecimal(args)
	if err != nil || mbit < 0.012 || mbit > 10000 {
		return fmt.Errorf("wants const:MBIT with a rate from 0.012 to 10000 Mbit/s")
	}
	t.Ms = spread([]float64{mbit}, 10000)
	return nil
}

// cell generates the cellular-like trace.
func (t *Trace) cell(args string) error {
	parts := strings.Split(args, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return fmt.Errorf("wants cell:MBIT/CV or cell:MBIT/CV/SEED (e.g. cell:10/0.5)")
	}
	mean, err := parseDecimal(parts[0])
	if err != nil || mean < 0.1 || mean > 1000 {
		return fmt.Errorf("mean %q is not a rate from 0.1 to 1000 Mbit/s", parts[0])
	}
	cv, err := parseDecimal(parts[1])
	if err != nil || cv > 3 {
		return fmt.Errorf("coefficient of variation %q is not between 0 and 3", parts[1])
	}
	seed := uint64(1)
	if len(parts) == 3 {
		if seed, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
			return fmt.Errorf("seed %q is not a whole number", parts[2])
		}
	}
	const slots, phi = 600, 0.9 // 60 s of 100 ms
	sigma := math.Sqrt(math.Log1p(cv * cv))
	rng := splitmix(seed)
	rates := make([]float64, slots)
	x := 0.0
	for i := range rates {
		x = phi*x + sigma*math.Sqrt(1-phi*phi)*rng.normal()
		rates[i] = math.Exp(x)
	}
	var sum float64
	for _, r := range rates {
		sum += r
	}
	for i := range rates {
		rates[i] *= mean * slots / sum
	}
	t.Ms = spread(rates, 100)
	return nil
}

// spread places opportunities for rates (Mbit/s), each held for slotMs
// milliseconds in turn: a running credit of bytes, one opportunity at
// the first whole millisecond where it reaches 1500. The last time is the
// end of the last slot, so the trace's period is the slots' total length.
func spread(rates []float64, slotMs int) []uint32 {
	var ms []uint32
	credit := 0.0
	for s, r := range rates {
		perMs := r * 1e6 / 8 / 1000
		for k := 1; k <= slotMs; k++ {
			credit += perMs
			for credit >= TraceOpportunity {
				credit -= TraceOpportunity
				ms = append(ms, uint32(s*slotMs+k))
			}
		}
	}
	end := uint32(len(rates) * slotMs)
	if len(ms) == 0 || ms[len(ms)-1] != end {
		// The format takes the period from the last line, which is an
		// opportunity too: one more at the very end when the credit did
		// not put one there (1500 bytes a period too many).
		ms = append(ms, end)
	}
	return ms
}

// splitmix is a small seeded generator for the trace generators (their
// output must not change with Go's math/rand).
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// normal is a standard normal draw (Box-Muller).
func (s *splitmix) normal() float64 {
	u1 := (float64(s.next()>>11) + 0.5) / (1 << 53)
	u2 := float64(s.next()>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
