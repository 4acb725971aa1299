package livetest

import (
	"os"
	"path/filepath"
)

// LockPath is the file every live test of the module's packages locks
// (Need).
func LockPath() string { return filepath.Join(os.TempDir(), "quicbench-live-test.lock") }
