//go:build !unix

package results

// openNoWait is nothing where opening a file cannot block on its kind
// (ReadFile still refuses anything but a regular file).
const openNoWait = 0
