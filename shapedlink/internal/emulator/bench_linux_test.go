package emulator

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shaperCPU is the shaper's CPU time so far, summed over its threads.
func shaperCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		tb.Fatalf("no /proc schedstat for the shaper %d", pid)
	}
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
	return time.Duration(sum)
}

// BenchmarkForward pushes b.N UDP frames (106 bytes on the wire) from
// server to client through a shaper with 1 ms of delay and no rate limit,
// in bursts of 32, and reports the shaper's CPU time per forwarded frame
// (shaper-ns/frame): the whole per-frame cost of the forwarding path,
// reads, model, writes and timer wake-ups, as opposed to
// BenchmarkModelArriveDepart, which is the model alone.
func BenchmarkForward(b *testing.B) {
	tp := newTopo(b)
	mon := tp.shaper(b, Config{
		AToB: Direction{RateMbit: 1000, Delay: time.Millisecond, Limit: 100000},
		BToA: Direction{RateMbit: 1000, Delay: time.Millisecond, Limit: 100000},
	})
	srv := listenUDP(b, tp.srv, tp.srvIP)
	cli := listenUDP(b, tp.cli, tp.cliIP)
	_ = cli.SetReadBuffer(8 << 20)
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := cli.ReadFromUDP(buf); err != nil {
				return
			}
		}
	}()
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, 64)
	before := mon.Snapshot()[0]
	cpu0 := shaperCPU(b, mon.PID())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			b.Fatal(err)
		}
		if i%32 == 31 {
			time.Sleep(20 * time.Microsecond)
		}
	}
	// Wait until every frame sent has been forwarded or dropped (frames
	// other than ours, such as IPv6 neighbour discovery, may add a few).
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		st := mon.Snapshot()[0]
		if st.Forwarded+st.Drops()-before.Forwarded-before.Drops() >= uint64(b.N) && st.Packets == 0 {
			break
		}
	}
	b.StopTimer()
	after := mon.Snapshot()[0]
	fwd := after.Forwarded - before.Forwarded
	if fwd == 0 {
		b.Fatal("nothing was forwarded")
	}
	b.ReportMetric(float64(shaperCPU(b, mon.PID())-cpu0)/float64(fwd), "shaper-ns/frame")
	b.ReportMetric(float64(after.Drops()-before.Drops()), "drops")
}
