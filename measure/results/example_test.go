package results_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/results"
)

func ExampleRunDir() {
	c := results.Cell{Profile: "150:2", RTTms: 150, RateMbit: 2, LossPct: 0.5, CC: "reno"}
	fmt.Println(c.Title())
	fmt.Println(results.RunDir("results/headline", c, "quic", 3))
	// Output:
	// 150 ms / 2 Mbit
	// results/headline/150ms-2mbit_loss0.5_reno/quic/r3
}
