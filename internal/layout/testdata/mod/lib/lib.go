package lib

import "example.com/fixture/measure/big"

// Used is called by app.
func Used() *Returned { return &Returned{N: big.One()} }

// Returned is never named outside, but Used returns it.
type Returned struct{ N int }

// Unused is called by nothing outside lib, only by lib's own tests.
func Unused() {}

// OnlyOtherTests is called only by app's tests.
func OnlyOtherTests() {}

// T is named by app.
type T struct{}

// String completes fmt.Stringer: used though nothing calls it.
func (T) String() string { return "T" }

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
