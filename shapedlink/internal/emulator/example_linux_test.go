package emulator_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/emulator"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Command checks the configuration before it prepares the shaper: here
// the down direction asks for a rate that is not a whole number of bytes
// per second, which netem could not apply as written, so neither does the
// emulator.
func ExampleCommand() {
	cfg := emulator.Config{
		IfA:  "qbshs0",
		IfB:  "qbshc0",
		AToB: linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110},
		BToA: linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10.0000001, Limit: 110},
	}
	_, _, err := emulator.Command(cfg)
	fmt.Println(err)
	// Output:
	// emulator: Config.BToA: rate 10.0000001 Mbit/s is 1250000.0125 bytes per second; netem applies a rate in whole bytes per second (and the emulator in bits), so it would not be this rate: use 10 or 10.000008
}
