// Package lib is a fixture: some of its exported names are used from
// outside, some are not.
//
// This package comment runs to more than fifteen lines, which a doc.go
// may do.
//
// Line.
// Line.
// Line.
// Line.
// Line.
// Line.
// Line.
// Line.
// Line.
// Line.
package lib
