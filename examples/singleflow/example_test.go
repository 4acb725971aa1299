package main

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/singleflow"
)

// The command line names the cells and flows; results.json records them
// so that the same command resumes the work directory. A controller's
// setting beyond its range is refused.
func Example() {
	c, workdir, err := parseFlags([]string{"-profiles", "20:20", "-losses", "0 1", "-flows", "quic tcp-reno", "-repeats", "3"})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := singleflow.NewRecord(c)
	fmt.Println(workdir, rec.Profiles, rec.Losses, rec.Repeats)
	for _, f := range rec.Flows {
		fmt.Printf("%s: arm %s, controller %q\n", f.Name, f.Arm, f.CC)
	}

	_, _, err = parseFlags([]string{"-quicreno-beta", "5000000000"})
	fmt.Println(err != nil)
	// Output:
	// results/singleflow [20:20] [0 1] 3
	// quic: arm quic, controller ""
	// tcp-reno: arm tcp, controller "reno"
	// true
}
