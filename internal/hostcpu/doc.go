// Package hostcpu reads how busy the host's CPUs were between two
// moments, from the kernel's counters in /proc/stat: the share of CPU
// time spent working and the share stolen by a hypervisor. A measurement
// records it beside its figures, so that a reader can tell a run taken on
// a saturated or descheduled host from one taken on an idle one.
//
//	a, err := hostcpu.Read()
//	// ... the measurement ...
//	b, err := hostcpu.Read()
//	use := hostcpu.Between(a, b) // use.Busy, use.Steal in [0, 1]
//
// Read fails on systems without /proc/stat.
package hostcpu
