package rig_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/shakenfist/quicbench/measure/rig"
)

// A role's result is read back from where its spec said to write it; a
// role that wrote none says so.
func ExampleReadResult() {
	dir, _ := os.MkdirTemp("", "rig")
	defer os.RemoveAll(dir)
	type result struct {
		Role string `json:"role"`
	}
	path := filepath.Join(dir, rig.RoleClient+".json")
	if _, err := rig.ReadResult[result](path); err != nil {
		fmt.Println(err)
	}
	os.WriteFile(path, []byte(`{"role":"client"}`), 0o644)
	r, err := rig.ReadResult[result](path)
	fmt.Println(r.Role, err)
	// Output:
	// the process wrote no result
	// client <nil>
}
