package quinncarrier_test

import (
	"context"
	"fmt"

	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// Start checks its configuration before it starts anything.
func ExampleStart() {
	_, err := quinncarrier.Start(context.Background(), quinncarrier.Config{Controller: "reno", Dir: "."},
		quinncarrier.Ends{Listen: "198.18.0.1:0", Targets: []string{"198.18.0.1:9000"}})
	fmt.Println(err)
	// Output:
	// quinncarrier: controller "reno": use one of cubic, bbr, newreno
}
