// Package livetest holds what the live tests of package spicelive and
// package spicelive/summary share: the check that a live SPICE session can
// run here, and the lock that keeps live sessions of two test binaries from
// running at once.
//
//	func TestLive(t *testing.T) {
//		livetest.Need(t) // skips where no live session can run; takes the lock
//		...
//	}
//
// It is for tests only; nothing else imports it. It does not import
// package spicelive, so that package's own tests can use it.
package livetest
