// Package vmtest verifies the kernel netem path of package shapedlink inside
// a qemu VM that boots Debian's stock kernel, which ships sch_netem as a
// module. The machines the project is developed and tested on run a kernel
// without sch_netem, so without this package the backend users' hosts run by
// default would never be exercised.
//
// Run it with
//
//	bash vmtest/run.sh
//
// which installs qemu, downloads (once, cached) Debian 12's
// linux-image-6.1.0-*-amd64 package and unpacks it without installing it,
// builds this package's tests as a static binary with `go test -c`, packs
// them with a small init (vmtest/cmd/vminit) and the needed modules into an
// initramfs (vmtest/cmd/vmpack, package vmtest/initramfs), boots it under
// TCG, and exits non-zero unless the tests pass inside the VM. See
// vmtest/README.md for options, timings and how to prove the tests can fail.
//
// On a host without sch_netem, `go test ./vmtest` skips the netem tests with
// a message saying so; inside the VM (VMTEST_IN_VM=1) a missing netem is a
// failure, never a skip.
//
// The tests check the kernel's read-back against independent arithmetic
// (expect.go): what a profile string must turn into
// in netem's own units, computed here from the grammar rather than through
// shapedlink, so that a wrong conversion in shapedlink cannot agree with
// itself.
package vmtest
