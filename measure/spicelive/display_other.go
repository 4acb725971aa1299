//go:build !linux

package spicelive

// DisplayMissing is empty: Prepare says why nothing runs here.
func DisplayMissing() string { return "" }
