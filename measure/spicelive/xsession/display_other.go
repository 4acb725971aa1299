//go:build !linux

package xsession

// DisplayMissing is empty: Prepare says why nothing runs here.
func DisplayMissing() string { return "" }

// MissingPrograms is empty: Prepare says why nothing runs here.
func MissingPrograms() string { return "" }
