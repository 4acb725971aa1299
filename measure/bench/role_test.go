package bench

import "testing"

func TestVmHWM(t *testing.T) {
	status := "Name:\tbench.test\nVmPeak:\t 1234 kB\nVmHWM:\t   20480 kB\nVmRSS:\t 100 kB\n"
	if got := vmHWM(status); got != 20480 {
		t.Errorf("vmHWM = %d, want 20480", got)
	}
	if got := vmHWM("VmRSS: 5 kB\n"); got != 0 {
		t.Errorf("vmHWM without the line = %d, want 0", got)
	}
	if u := selfUsage(); u == nil || u.MaxRSSKiB <= 0 || u.CPU() <= 0 {
		t.Errorf("selfUsage = %+v", u)
	}
}
