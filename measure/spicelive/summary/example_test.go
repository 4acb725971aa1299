package summary_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/spicelive/summary"
)

// A samples directory is cited by its name under docs/results.
func ExampleResultsName() {
	fmt.Println(summary.ResultsName("docs/results/spicelive-cc-8010"))
	fmt.Println(summary.ResultsName("/tmp/mine"))
	// Output:
	// spicelive-cc-8010
	// mine
}
