package hostcpu

import (
	"math"
	"runtime"
	"testing"
)

func TestParseAndBetween(t *testing.T) {
	a, err := parse([]byte("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	// 300 ticks pass: 120 working (user 60, system 30, softirq 30), 150 idle or waiting, 30 stolen.
	b, err := parse([]byte("cpu  160 0 80 920 80 0 30 30 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	u := Between(a, b)
	if math.Abs(u.Busy-0.4) > 1e-9 || math.Abs(u.Steal-0.1) > 1e-9 {
		t.Errorf("Between = %+v, want busy 0.4, steal 0.1", u)
	}
	if u := Between(b, a); u != (Use{}) {
		t.Errorf("counters that went back gave %+v, want zero", u)
	}
	for _, bad := range []string{"", "cpu 1 2 3\n", "cpu 1 2 3 x 5 6 7 8\n", "cpu0 1 2 3 4 5 6 7 8\n"} {
		if _, err := parse([]byte(bad)); err == nil {
			t.Errorf("parse(%q) took it", bad)
		}
	}
}

func TestReadSeesWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/stat, which only Linux has")
	}
	a, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	// Work on this CPU until the kernel has counted some of it.
	var b Times
	for {
		if b, err = Read(); err != nil {
			t.Fatal(err)
		}
		if b.Busy > a.Busy {
			break
		}
	}
	u := Between(a, b)
	if u.Busy <= 0 || u.Busy > 1 || u.Steal < 0 || u.Steal > 1 {
		t.Errorf("Between = %+v, want a busy share in (0, 1]", u)
	}
	if n := CPUs(); n < 1 {
		t.Errorf("CPUs = %d", n)
	}
}
