package main

import (
	"fmt"
	"time"
)

// The flags become the library's Config: each profile at each loss level,
// and the arms in the order they run.
func Example() {
	c, err := buildConfig("80:10 150:2", "0 1", "tcp fallback-blocked", 10, 5, 400*time.Millisecond, 300*time.Millisecond,
		"results/fallback", "", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Profiles, c.Arms, c.Connects, c.GiveUp)
	// Output:
	// [80:10 80:10:1 150:2 150:2:1] [tcp fallback-blocked] 10 400ms
}
