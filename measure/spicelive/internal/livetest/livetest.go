package livetest

import (
	"os"
	"path/filepath"
)

// lockPath is the file every live test of the module's packages locks
// (Need).
func lockPath() string { return filepath.Join(os.TempDir(), "quicbench-live-test.lock") }
