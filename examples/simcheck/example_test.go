package main

import "fmt"

// The flags choose the mode; a flag the other mode uses is refused by
// name.
func Example() {
	f, err := parseFlags([]string{"-headline", "-repeats", "3"})
	fmt.Println(f.headline, f.repeats, f.hlProfile, err)
	_, err = parseFlags([]string{"-repeats", "3"})
	fmt.Println(err)
	// Output:
	// true 3 80:10:1 <nil>
	// -repeats is used by -headline only: add -headline, or leave it out
}
