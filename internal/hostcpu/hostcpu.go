package hostcpu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Times are the host's cumulative CPU times over all CPUs, in the
// kernel's clock ticks.
type Times struct {
	// Busy is user, nice, system, irq and softirq time; Idle is idle and
	// iowait; Steal is time a hypervisor ran something else.
	Busy, Idle, Steal uint64
}

// Use is how the host's CPUs were spent between two Times, as shares of
// the time that passed on all of them.
type Use struct {
	// Busy is the share spent working, Steal the share stolen.
	Busy  float64 `json:"busy"`
	Steal float64 `json:"steal"`
	// CPUs is how many CPUs the host has.
	CPUs int `json:"cpus"`
}

// Read returns the host's CPU times now.
func Read() (Times, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Times{}, fmt.Errorf("the host's CPU times: %w", err)
	}
	return parse(b)
}

// CPUs counts the CPUs in /proc/stat.
func CPUs() int {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && strings.HasPrefix(f[0], "cpu") && f[0] != "cpu" {
			n++
		}
	}
	return n
}

// parse reads the aggregate "cpu" line of /proc/stat.
func parse(b []byte) (Times, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return Times{}, fmt.Errorf("/proc/stat's cpu line has %d fields, want at least 8 counters", len(f)-1)
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return Times{}, fmt.Errorf("/proc/stat's cpu line: %w", err)
			}
			v[i] = n
		}
		// user nice system idle iowait irq softirq steal
		return Times{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}, nil
	}
	return Times{}, errors.New("/proc/stat has no cpu line")
}

// Between is how the CPU time that passed from a to b was spent; zero
// when none passed.
func Between(a, b Times) Use {
	busy, idle, steal := b.Busy-a.Busy, b.Idle-a.Idle, b.Steal-a.Steal
	total := busy + idle + steal
	if total == 0 || b.Busy < a.Busy || b.Idle < a.Idle || b.Steal < a.Steal {
		return Use{}
	}
	return Use{Busy: float64(busy) / float64(total), Steal: float64(steal) / float64(total)}
}
