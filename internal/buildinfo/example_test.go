package buildinfo_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/internal/buildinfo"
)

// A record carries the commit that made it, or why there is none.
func ExampleRead() {
	info := buildinfo.Read()
	fmt.Println(info.Module)
	fmt.Println(info.Commit != "" || info.CommitMissing != "")
	// Output:
	// github.com/shakenfist/quicbench
	// true
}
