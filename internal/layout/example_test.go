package main

import "os"

// The files of the fixture package testdata/mod/files on floors: a.go
// and b.go use each other, so one arrow must run back up.
func Example_files() {
	run([]string{"-C", "testdata/mod", "-files", "./files"}, os.Stdout, os.Stderr)
	// Output:
	// files: 3 files (this system's build) on 2 floors, 3 arrows, 1 back up
	//   floor 2: b.go c.go
	//   floor 1: a.go
	//   back up: files/a.go -> files/b.go (b)
}
