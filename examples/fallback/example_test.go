package main

import (
	"flag"
	"fmt"
	"time"
)

// The flags become the library's Config: each profile at each loss level,
// and the arms in the order they run.
func Example() {
	fs := flag.NewFlagSet("fallback", flag.ContinueOnError)
	link := linkFlags(fs)
	if err := fs.Parse([]string{"-profiles", "80:10 150:2"}); err != nil {
		fmt.Println(err)
		return
	}
	c, err := buildConfig(link, "0 1", "tcp fallback-blocked", 10, 5, 400*time.Millisecond, 300*time.Millisecond, "results/fallback")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Profiles, c.Arms, c.Connects, c.GiveUp)
	// Output:
	// [80:10 80:10:1 150:2 150:2:1] [tcp fallback-blocked] 10 400ms
}
