// Package linkmodeltest drives a direction's link model step by step over
// a fixed arrival sequence and condenses what it decided into a
// fingerprint, for golden tests that pin the model's behaviour: a change
// to how a direction is modelled changes the fingerprint.
//
//	d := ... // a resolved, seeded linkspec.Direction
//	fmt.Println(linkmodeltest.Fingerprint(d))
//
// Only tests import it.
package linkmodeltest
