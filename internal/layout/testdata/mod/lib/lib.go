package lib

import (
	"example.com/fixture/internal/inner"
	"example.com/fixture/measure/big"
)

// Used is called by app.
func Used() *Returned { return &Returned{N: big.One()} }

// Returned is never named outside, but Used returns it.
type Returned struct {
	N int
	K inner.Kind
}

// Kind is how a user outside the module names Returned's K: used, as is
// KindB, a value of it.
type Kind = inner.Kind

// KindB is a value of Kind.
const KindB = inner.KindA + 1

// Mode is a type nothing uses, so neither it nor ModeX counts.
type Mode int

// ModeX is a value of Mode.
const ModeX Mode = 1

// Unused is called by nothing outside lib, only by lib's own tests.
func Unused() {}

// OnlyOtherTests is called only by app's tests.
func OnlyOtherTests() {}

// T is named by app.
type T struct{}

// String completes fmt.Stringer: used though nothing calls it.
func (T) String() string { return "T" }

// Unwrap is what errors.Unwrap asserts for: used though nothing calls it.
func (T) Unwrap() error { return nil }

// Extra is a method nothing calls and no interface needs.
func (T) Extra() {}

// Impl is named by app.
type Impl struct{}

// Do completes app's Doer.
func (*Impl) Do() {}

// Limit is a constant nothing outside uses.
const Limit = 3

func internal() { Unused() }

// ByNested is called only by the nested module's command.
func ByNested() {}

// Shown is named only by lib's Example: a library's API.
func Shown() {}

// Whole is named only in a whole-file Example's init: a library's API.
func Whole() {}

// NotShown is named in an Example file but outside what go doc shows.
func NotShown() {}

// Made is what ShownMakes returns: part of an API its Example shows.
type Made struct{ N int }

// ShownMakes is named only by lib's Example.
func ShownMakes() Made { return Made{} }
