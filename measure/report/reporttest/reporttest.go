package reporttest

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// Warmup is the warm-up every synthetic run records.
const Warmup = 5 * time.Second

// WarmupRTT is the round trip of the samples inside the warm-up.
const WarmupRTT = 900 * time.Millisecond

// ArmSpec describes one arm of one synthetic cell, in milliseconds.
type ArmSpec struct {
	Arm string
	// P50 and P99 are every repeat's own p50 and p99; RepeatP95 each
	// repeat's own p95 (one per repeat).
	P50, P99  float64
	RepeatP95 []float64
	// N is the number of post-warm-up samples per repeat.
	N int
	// Mbit is the median throughput; repeats vary around it by ±1%.
	Mbit float64
	// ConnectMs is every repeat's connect time.
	ConnectMs float64
}

// Repeat builds one repeat's samples: N after the warm-up whose
// nearest-rank p50, p95 and p99 are exactly the given values (ms), plus ten
// inside the warm-up at WarmupRTT.
func Repeat(p50, p95, p99 float64, n int) []stats.Sample {
	rank := func(p float64) int { return max(1, int(math.Ceil(p*float64(n)/100))) - 1 }
	r50, r95, r99 := rank(50), rank(95), rank(99)
	anchors := []struct {
		i int
		v float64
	}{{0, p50 * 0.9}, {r50, p50}, {r95, p95}, {r99, p99}, {n - 1, p99 * 1.05}}
	vals := make([]float64, n)
	for k := 0; k+1 < len(anchors); k++ {
		a, b := anchors[k], anchors[k+1]
		for i := a.i; i <= b.i; i++ {
			t := 0.0
			if b.i > a.i {
				t = float64(i-a.i) / float64(b.i-a.i)
			}
			vals[i] = a.v + t*(b.v-a.v)
		}
	}
	vals[r50], vals[r95], vals[r99] = p50, p95, p99
	var out []stats.Sample
	for i := range 10 {
		out = append(out, stats.Sample{Offset: time.Duration(i) * 400 * time.Millisecond, RTT: WarmupRTT})
	}
	// Interleave the ranks in time (stride coprime with n), so the samples
	// are not in sorted order.
	stride := 7
	for n%stride == 0 {
		stride++
	}
	for i := range n {
		out = append(out, stats.Sample{
			Offset: Warmup + time.Duration(i)*100*time.Millisecond,
			RTT:    dur(vals[(i*stride)%n]),
		})
	}
	return out
}

func dur(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// host is a host state record shaped like shapedlink.HostState's JSON.
var host = json.RawMessage(`{"kernel_release":"6.18.0-test","tcp_available_congestion_control":["reno","cubic","bbr"],` +
	`"tcp_congestion_control":"bbr","tcp_rmem":"4096 131072 6291456","tcp_wmem":"4096 16384 4194304",` +
	`"tcp_notsent_lowat":"4294967295","netem_available":false,"backend":"emulator","mode":"root",` +
	`"applied":["server->client delay 40ms"],` +
	`"offload":[{"namespace":"server","device":"qbs0","mtu":1500,"gso_max_segs":1,"tso":false,"gso":false,"gro":false}],` +
	`"go_version":"go1.26.0"}`)

// Cell builds the runs of one cell from its arms' specs: the QUIC arms'
// runs record quic-go's controller and offload verified off, every other
// arm's (tcp, tcp-mux) the cell's congestion control.
func Cell(c results.Cell, arms ...ArmSpec) []results.Run {
	var runs []results.Run
	start := time.Date(2026, 11, 12, 10, 0, 0, 0, time.UTC)
	for rep := range 5 {
		for _, a := range arms {
			r := results.Run{
				Schema:         results.SchemaVersion,
				Cell:           c,
				Arm:            a.Arm,
				Repeat:         rep + 1,
				Started:        start,
				Finished:       start.Add(45 * time.Second),
				Duration:       45 * time.Second,
				Warmup:         Warmup,
				Samples:        Repeat(a.P50, a.RepeatP95[rep], a.P99, a.N),
				ThroughputMbit: a.Mbit * (1 + 0.005*float64(rep-2)),
				ConnectTime:    dur(a.ConnectMs + 0.1*float64(rep)),
				Link: results.Link{
					Backend: "emulator",
					Applied: []string{
						fmt.Sprintf("server->client delay %gms rate %gmbit loss %g%% limit 110", c.RTTms/2, c.RateMbit, c.LossPct),
						fmt.Sprintf("client->server delay %gms rate %gmbit loss %g%% limit 110", c.RTTms/2, c.RateMbit, c.LossPct),
					},
					Limit: 110,
					Seed:  42,
				},
				Host: host,
			}
			start = start.Add(time.Minute)
			if !measure.Arm(a.Arm).QUIC() {
				r.CongestionControl = []string{c.CC}
			} else {
				r.CongestionControl = []string{"newreno"}
				r.QUICGSO = []bool{false}
				r.GSOQueue = &gsocheck.Result{
					Verdict: gsocheck.Off, Reason: "no sample exceeded 1442 bytes per slot", Expected: 1442,
					Used: 300, Total: 450, PooledMean: 1436.1 + 1.45*float64(rep), Median: 1441, Max: 1442,
				}
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// Seed returns the synthetic matrix: three reno cells at 80 ms / 10 Mbit
// (0, 1 and 2% loss) with the original Rust bench's figures, and a cubic sensitivity
// cell at 0% loss. Readings by the spread rule: 0% QUIC better (-4.8 ms
// against 1.2), 1% QUIC worse (+61.6 against 0.9), 2% unresolved (+75.0
// against 300.5).
func Seed() []results.Run {
	cell := func(loss float64, cc string) results.Cell {
		return results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: loss, CC: cc, Sensitivity: cc != "reno"}
	}
	var runs []results.Run
	runs = append(runs, Cell(cell(0, "reno"),
		ArmSpec{Arm: "tcp", P50: 154.1, P99: 172.2, RepeatP95: []float64{169.8, 170.4, 171.0, 171.0, 171.0}, N: 232, Mbit: 9.56, ConnectMs: 401.4},
		ArmSpec{Arm: "quic", P50: 143.2, P99: 167.4, RepeatP95: []float64{166.2, 166.2, 166.2, 166.7, 167.2}, N: 243, Mbit: 9.48, ConnectMs: 84.3},
	)...)
	runs = append(runs, Cell(cell(1, "reno"),
		ArmSpec{Arm: "tcp", P50: 80.4, P99: 392.5, RepeatP95: []float64{82.70, 82.76, 82.76, 82.76, 82.80}, N: 368, Mbit: 1.64, ConnectMs: 401.4},
		ArmSpec{Arm: "quic", P50: 101.1, P99: 228.2, RepeatP95: []float64{143.8, 144.0, 144.34, 144.5, 144.7}, N: 309, Mbit: 1.56, ConnectMs: 84.3},
	)...)
	runs = append(runs, Cell(cell(2, "reno"),
		ArmSpec{Arm: "tcp", P50: 80.4, P99: 405.4, RepeatP95: []float64{82.7, 83.0, 83.4, 83.6, 383.2}, N: 347, Mbit: 0.94, ConnectMs: 401.4},
		ArmSpec{Arm: "quic", P50: 112.7, P99: 309.1, RepeatP95: []float64{145.2, 150.0, 158.4, 170.0, 218.4}, N: 283, Mbit: 1.11, ConnectMs: 84.3},
	)...)
	runs = append(runs, Cell(cell(0, "cubic"),
		ArmSpec{Arm: "tcp", P50: 86.2, P99: 110.0, RepeatP95: []float64{100.0, 103.0, 104.4, 104.6, 104.9}, N: 400, Mbit: 9.28, ConnectMs: 401.4},
		ArmSpec{Arm: "quic", P50: 143.2, P99: 167.4, RepeatP95: []float64{166.2, 166.2, 166.2, 166.7, 167.2}, N: 243, Mbit: 9.48, ConnectMs: 84.3},
	)...)
	return runs
}

// Write stores runs under workdir, one run.json per cell, arm and repeat.
func Write(workdir string, runs []results.Run) error {
	for _, r := range runs {
		p := filepath.Join(results.RunDir(workdir, r.Cell, r.Arm, r.Repeat), results.RunFile)
		if err := results.WriteJSON(p, r); err != nil {
			return err
		}
	}
	return nil
}
