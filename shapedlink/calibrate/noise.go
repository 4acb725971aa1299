package calibrate

import "fmt"

// Noise says whether the idle round trip is measured with a background
// load running (Config.Noise, -noise).
type Noise string

const (
	// NoiseOff measures on the machine as it is.
	NoiseOff Noise = "off"
	// NoiseOn measures each profile's idle round trip (the bare pair's,
	// the link's and the emulator's lateness) with NoiseLoad running.
	NoiseOn Noise = "on"
	// NoiseBoth measures each profile's idle round trip as NoiseOff
	// does, then once more, on a fresh bare pair and link, with
	// NoiseLoad running (Result.Noisy).
	NoiseBoth Noise = "both"
)

// NoiseLoad describes the background load of NoiseOn and NoiseBoth.
const NoiseLoad = "one CPU-bound process at nice 19 per online CPU (a loop that never sleeps or makes a system call) " +
	"and one allocation-heavy process at nice 0 (it keeps 64 MiB live in 1 MiB blocks, replaces one block at a time, " +
	"writes every page of each new block, and hands freed memory back to the kernel every 100 ms); " +
	"all are this program re-executed, started before the bare pair is probed and killed once the link's probe ends, " +
	"and they exit with it"

// ParseNoise reads "off", "on" or "both" ("" is off).
func ParseNoise(s string) (Noise, error) {
	switch Noise(s) {
	case "", NoiseOff:
		return NoiseOff, nil
	case NoiseOn, NoiseBoth:
		return Noise(s), nil
	}
	return "", fmt.Errorf("noise %q: say off, on or both", s)
}
