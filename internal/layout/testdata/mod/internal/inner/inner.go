// Package inner is a fixture: an internal package whose Example names a
// name nothing else uses.
package inner

// Shown is named only by inner's Example.
func Shown() {}
