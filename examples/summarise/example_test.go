package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/shakenfist/quicbench/measure/report/reporttest"
)

// Summarise a results directory (here a synthetic one reproducing the
// reference's 80 ms / 10 Mbit cells) and show its reading table.
func Example() {
	dir, err := os.MkdirTemp("", "summarise-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := reporttest.Write(dir, reporttest.Seed()); err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{dir}, &out, os.Stderr); err != nil {
		fmt.Println(err)
		return
	}
	// Print the reading tables' rows, up to the verdict column.
	for _, line := range strings.Split(out.String(), "\n") {
		cols := strings.Split(line, " | ")
		if strings.HasPrefix(line, "| 80 ms / 10 Mbit") && len(cols) == 8 {
			fmt.Println(strings.Join(cols[:5], " | ") + " |")
		}
	}
	// Output:
	// | 80 ms / 10 Mbit | 0% | -4.8 | 1.2 | QUIC better |
	// | 80 ms / 10 Mbit | 1% | +61.6 | 0.9 | QUIC worse |
	// | 80 ms / 10 Mbit | 2% | +75.0 | 300.5 | unresolved |
	// | 80 ms / 10 Mbit | 0% | +61.8 | 4.9 | QUIC worse |
}
