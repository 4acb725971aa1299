package calibrate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// shaperCPU is the emulator process's CPU time in ns, summed over its
// threads, or -1 when there is none.
func shaperCPU(pid int) int64 {
	if pid == 0 {
		return -1
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			sum += v
		}
	}
	if len(tasks) == 0 {
		return -1
	}
	return sum
}

// drain waits until nothing is queued in either direction.
func drain(l *shapedlink.Link, d time.Duration) {
	end := time.Now().Add(d)
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		s, err := l.Instruments().Sampler(e)
		if err != nil {
			continue
		}
		for time.Now().Before(end) {
			if q, err := s.Poll(); err != nil || q.Packets == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		s.Close()
	}
}

// shaperDrops is the server-to-client direction's drops so far.
func shaperDrops(l *shapedlink.Link) uint64 {
	s, err := l.Instruments().Sampler(shapedlink.ServerEnd)
	if err != nil {
		return 0
	}
	defer s.Close()
	q, err := s.Poll()
	if err != nil {
		return 0
	}
	return q.Drops
}

// framesIn is every frame that entered the link, both directions.
func framesIn(l *shapedlink.Link) uint64 {
	var n uint64
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		if c, err := l.Instruments().EgressCounters(e); err == nil {
			n += c.All.Packets
		}
	}
	return n
}

// priority describes the emulator's scheduling from /proc (policy and nice
// of its threads), or "" without an emulator.
func priority(pid int) string {
	if pid == 0 {
		return ""
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	seen := map[string]int{}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		// Fields after the command: state is f[0]; nice is stat field 19
		// (f[16]) and policy field 41 (f[38]).
		if len(f) < 39 {
			continue
		}
		pol := map[string]string{"0": "SCHED_OTHER", "1": "SCHED_FIFO", "2": "SCHED_RR", "3": "SCHED_BATCH", "5": "SCHED_IDLE"}[f[38]]
		seen[pol+" nice "+f[16]]++
	}
	var parts []string
	for k, v := range seen {
		parts = append(parts, fmt.Sprintf("%d threads %s", v, k))
	}
	return strings.Join(parts, ", ")
}
