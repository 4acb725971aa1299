package initramfs_test

import (
	"bytes"
	"fmt"

	"github.com/shakenfist/quicbench/vmtest/initramfs"
)

// An initramfs with a console device node and an init, as the kernel
// unpacks it at boot.
func ExampleWriter() {
	var buf bytes.Buffer
	w := initramfs.NewWriter(&buf)
	_ = w.Dir("dev", 0o755)
	_ = w.CharDev("dev/console", 0o600, 5, 1)
	_ = w.File("init", 0o755, []byte("#!/bin/true\n"))
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	// Every entry starts with the newc magic; sizes are multiples of four.
	fmt.Println(bytes.Count(buf.Bytes(), []byte("070701")), buf.Len()%4)
	// Output: 4 0
}
