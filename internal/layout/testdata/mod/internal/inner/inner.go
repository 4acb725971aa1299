// Package inner is a fixture: an internal package whose Example names a
// name nothing else uses.
package inner

// Shown is named only by inner's Example.
func Shown() {}

// Kind is the type of lib.Returned's K: part of what app uses, though
// app never names it.
type Kind int

// KindA is a value of Kind.
const KindA Kind = 1
