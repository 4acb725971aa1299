// Package uses imports lib, a room above measure, so the import between
// the rooms lib and measure runs back up.
package uses

import "example.com/fixture/lib"

// Call is used by nothing.
func Call() { lib.Used() }
