package calibrate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/table.golden and testdata/report.golden.json from the code as it is")

// goldenReport is a report that takes every path through the table: a
// clean profile, a lossy one with failed parts, one that failed outright,
// a jittered one and two whose link varies (netem's and the emulator's
// schedule figures), sweep rows that pass, miss and fail, the iperf3
// table of a link keeping offloads (both bare pairs, rows that pass,
// miss, are beyond the bare pair and fail), the queue discipline table,
// and the UDP_SEGMENT loss and quic-go measurements. Every field of every
// type is set somewhere, so the JSON golden pins every field's name. (A
// wire-mode report from before the offload was recorded is
// testdata/old-wire-report.json: TestOldReportRenders.)
func goldenReport() Report {
	return Report{
		Started:           time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Host:              "bench-1",
		Load:              "0.52 0.40 0.33 1/234 5678",
		Build:             buildinfo.Info{Module: "github.com/shakenfist/quicbench", Version: "(devel)", GoVersion: "go1.26.0", Commit: "0123456789abcdef", CommitSource: "git", CommitMissing: "not missing"},
		Offload:           "keep",
		DepartureWindowUs: 200,
		Results: []Result{
			{
				Profile: "80:10", Backend: "emulator", Priority: "2 threads SCHED_FIFO nice 0",
				Applied:         []string{"down: delay 40ms rate 10mbit limit 100", "up: delay 40ms rate 10mbit limit 100"},
				Ping:            &Probe{Sent: 200, Answered: 200, IntervalMs: 10, ExpectedMs: 80.157, MinErrMs: 0.01, P50ErrMs: 0.04, P90ErrMs: 0.09, P99ErrMs: 0.3, MaxErrMs: 1.2},
				Bare:            &Probe{Sent: 200, Answered: 199, IntervalMs: 10, ExpectedMs: 0, MinErrMs: 0.005, P50ErrMs: 0.02, P90ErrMs: 0.03, P99ErrMs: 0.1, MaxErrMs: 0.4},
				ShaperLateP50Ms: 0.002, ShaperLateP99Ms: 0.05, ShaperLateMaxMs: 0.7,
				ShaperGCCycles: new(uint64(0)), ShaperGCPauseMaxMs: 0.25,
				LateTrace: &LateTrace{Caught: true, File: "trace-late-80_10-quiet-120000.000.txt", Reading: "thread 42 wrote a frame 1.500 ms late"},
				Noisy: &Idle{
					Bare:            &Probe{Sent: 200, Answered: 200, IntervalMs: 10, P50ErrMs: 0.03, P99ErrMs: 0.2},
					Ping:            &Probe{Sent: 200, Answered: 200, IntervalMs: 10, ExpectedMs: 80.157, P50ErrMs: 0.05, P99ErrMs: 1.5},
					ShaperLateP50Ms: 0.003, ShaperLateP99Ms: 0.9, ShaperLateMaxMs: 6.5,
					ShaperGCCycles: new(uint64(1)), ShaperGCPauseMaxMs: 0.5, Error: "not an error, a golden field",
					LateTrace: &LateTrace{Error: "trace: mounting tracefs: operation not permitted"},
				},
				ExpectedRTTms: 80.14, Echoes: 200, Answered: 200, RTTMinMs: 80.15, RTTP50Ms: 80.2, RTTP99Ms: 80.6, RTTP50ErrMs: 0.06, RTTP99ErrMs: 0.46,
				BaselineP50Ms: 0.031, BaselineP99Ms: 0.09,
				Bulk: []Bulk{
					{CC: "bbr", Buffers: "32MiB refused without host root; granted receive 212992 bytes (net.core.rmem_max)", GoodputMbit: 9.41, GoodputPct: 94.1, WirePct: 97.9, WireFrom: "shaper"},
					{CC: "cubic", Buffers: "default", GoodputMbit: 9.02, GoodputPct: 90.2, WirePct: 93.8, WireFrom: "estimate"},
				},
				LossSent: 4000, LossDelivered: 4000, LossPct: 0, LossLoPct: 0, LossHiPct: 0.096, LossInside: true,
				LossMeanBurst: 1, LossBurstWant: 1, LossShaperDrops: 3,
				CPUPerPacketNs: 2150,
			},
			{
				Profile: "80:10:1,down.dup=10,down.reorder=20/0/2", Backend: "netem", Noise: "on", LateTrace: &LateTrace{},
				Applied:       []string{"down: netem delay 40ms loss 1% duplicate 10% reorder 20% gap 2 rate 10mbit"},
				Ping:          &Probe{Sent: 200, Answered: 180, IntervalMs: 10, ExpectedMs: 80.157, P50ErrMs: -0.2, P99ErrMs: 0.9, Error: "20 echoes unanswered"},
				Bare:          &Probe{Sent: 200, Error: "no link"},
				ExpectedRTTms: 80.14, Echoes: 200,
				BaselineP50Ms: 0.03, BaselineP99Ms: 0.08,
				Bulk: []Bulk{
					{CC: "bbr", Buffers: "32MiB", Error: "TCP_CONGESTION \"bbr\": no such file or directory (is tcp_bbr loaded?)"},
					{CC: "cubic", Buffers: "default", GoodputMbit: 7.5, GoodputPct: 75, WirePct: 78, WireFrom: "estimate"},
				},
				LossSent: 4000, LossDelivered: 3931, LossPct: 1.725, LossLoPct: 1.36, LossHiPct: 2.18,
				DupPct: 10.2, DupLoPct: 9.3, DupHiPct: 11.2, DupWantPct: 10,
				ReorderPct: 17.9, ReorderLoPct: 16.7, ReorderHiPct: 19.1, ReorderWantPct: 100.0 / 6,
				CorruptCaughtPct: 4.2, CorruptCaughtLoPct: 3.6, CorruptCaughtHiPct: 4.9, CorruptWantPct: 4.326, CorruptArrived: 1,
				Error: "echo: sendto: no buffer space available",
			},
			{Profile: "150:2", Error: "shapedlink: the kernel has no sch_netem"},
			{
				Profile: "20:10,jitter=5/normal", Backend: "emulator",
				Ping:          &Probe{Sent: 200, Answered: 200, ExpectedMs: 20.2, P50ErrMs: 3.1, P99ErrMs: 11.4},
				ExpectedRTTms: 20.1, Echoes: 200, Answered: 200, RTTP50ErrMs: 3.2, RTTP99ErrMs: 11.9,
				Bulk:     []Bulk{{CC: "bbr", Buffers: "32MiB", GoodputPct: 96.4, WirePct: 100.2, WireFrom: "shaper"}, {CC: "cubic", Buffers: "default", GoodputPct: 80, WirePct: 83.1, WireFrom: "shaper"}},
				LossSent: 4000, LossDelivered: 4000, LossHiPct: 0.096, LossInside: true,
				Jitter: &JitterFit{Probes: 400, GapMs: 20, KS: 0.041, KSCrit: 0.068, Fits: true, Levels: []float64{0.05, 0.5, 0.95}, Meas: []float64{-8.1, 0.2, 8.3}, Want: []float64{-8.2, 0, 8.2}},
			},
			{
				Profile: "40:10,down.trace=const:10", Backend: "emulator",
				Bare: &Probe{Sent: 200, Answered: 200, P50ErrMs: 0.02, P99ErrMs: 0.05},
				TimeVarying: &TimeVarying{TraceWindows: 10, TraceDeliveredPct: 99.7, TraceMaxErrFrames: 2.5,
					Blackouts: 2, EdgeErrMs: []float64{0.4, -0.6, 0.9, 0.1}, Changes: 4, ShaperMaxLagMs: 0.12},
			},
			{
				Profile: "80:10,schedule=roam.json", Backend: "netem",
				TimeVarying: &TimeVarying{Changes: 6, MaxAckLagMs: 1.7, Error: "the flood stopped early"},
			},
		},
		Sweep: []Sweep{
			{RateMbit: 200, Bulk: Bulk{CC: "bbr", Buffers: "32MiB", GoodputMbit: 190.2, WirePct: 98.7}, Cubic: Bulk{CC: "cubic", Buffers: "32MiB", GoodputMbit: 185.5, WirePct: 96.2}, CPUNs: 1800},
			{RateMbit: 2000, Bulk: Bulk{CC: "bbr", Buffers: "default", GoodputMbit: 1500, WirePct: 77.7}, Cubic: Bulk{CC: "cubic", Buffers: "32MiB", Error: "no data arrived after the warm-up"}, CPUNs: 950},
			{RateMbit: 5000, Error: "shapedlink: rate above the limit"},
		},
		HighestOKMbit: 200,
		Iperf: []Iperf{
			{Label: bareKeepLabel, Profile: "2:100000", Backend: "none", Offload: "keep", Mbit: 18000, Retransmits: 3},
			{Label: bareWireLabel, Profile: "2:100000", Backend: "none", Offload: "wire", Mbit: 460, Retransmits: 1},
			{Label: "unlimited", Profile: "2:100000", Backend: "emulator", Offload: "keep", Mbit: 5200, Retransmits: 12, CPUNsPerFrame: 1450, CPUSecPerGB: 0.82, SuperPacketsIn: 41000, SuperPacketsOut: 39000,
				Segments: 480000, FramesOut: 60000, Early: 120000, EarlyMaxMs: 0.2},
			{Label: "5:1000", Profile: "5:1000", Backend: "emulator", Offload: "keep", RateMbit: 1000, Mbit: 930, GoodputPct: 93, WirePct: 97.4, WireFrom: "shaper", CPUNsPerFrame: 2100, CPUSecPerGB: 1.4},
			{Label: "5:2000", Profile: "5:2000", Backend: "emulator", Offload: "keep", RateMbit: 2000, Mbit: 1700, GoodputPct: 85, WirePct: 88.9, WireFrom: "shaper", CPUSecPerGB: 1.2},
			{Label: "5:50000", Profile: "5:50000", Backend: "emulator", Offload: "keep", RateMbit: 50000, Mbit: 5000, GoodputPct: 10, WirePct: 10.5, WireFrom: "estimate"},
			{Label: "5:100", Profile: "5:100", Backend: "netem", Offload: "keep", Error: "iperf3 client: exit status 1"},
		},
		Qdisc: []Qdisc{
			{Discipline: "codel", Profile: "80:10,qdisc=codel", Applied: []string{"down: codel"}, FlowMbit: 9.1, StandingP50Ms: 4.2, StandingP95Ms: 11, Samples: 600,
				SparseP50Ms: 4.5, SparseP95Ms: 12, Echoes: 500, EchoesSent: 500, LimitDrops: 1, QueueDrops: 2, CoDelDrops: 7, ECNMarks: 9},
			{Discipline: "fq_codel", Profile: "80:10,qdisc=fq_codel", Error: "netem refuses it"},
		},
		GSOLoss: &GSOLoss{
			Profile: "5:2000:0.1", Backend: "emulator", Offload: "keep", Applied: []string{"server qbsrv0 -> client: emulator delay 2.5ms rate 2Gbit limit 1260 loss 0.1% seed 1 offload keep"},
			LossWantPct: 0.1, PacePct: 60, Seconds: 8.01, Payload: 1400, Batch: 32, GRO: true, Coalesced: 90000, Malformed: 1,
			Sent: 832000, Lost: 845, LossPct: 0.1016, LossLoPct: 0.0949, LossHiPct: 0.1086, Inflation: 1, Inside: true, MeanBurst: 1.002, BurstWant: 1.001,
			Shaper: true, ShaperReceived: 832000, ShaperLossDrops: 840, LimitDrops: 4, SendErrors: 1, SocketDrops: 2, OtherDrops: 3,
			SuperPacketsIn: 26000, SuperPacketsOut: 90500, RcvbufErrors: 5, SndbufErrors: 6,
			Unjudged: "4 dropped at the limit; 5 dropped by the receiving socket (RcvbufErrors)",
		},
		QUICGSO: &QUICGSO{
			Profile: "5:1000:1", Backend: "emulator", Offload: "keep", Applied: []string{"server qbsrv0 -> client: emulator delay 2.5ms rate 1Gbit limit 635 loss 1% seed 1 offload keep"},
			RateMbit: 1000, LossWantPct: 1, Seconds: 6.02, GoodputMbit: 212.5, GoodputPct: 21.25, GSO: true,
			Shaper: true, ShaperReceived: 160000, ShaperLossDrops: 1630, LossPct: 1.019, LossLoPct: 0.971, LossHiPct: 1.069, Inflation: 1, Inside: true,
			LimitDrops: 7, SocketDrops: 8, SendErrors: 9, SuperPacketsIn: 52000, SuperPacketsOut: 3100,
		},
	}
}

// TestTableGolden: the table printed for goldenReport, and the report's
// JSON, are byte for byte what they were. A change here is a change in
// what readers see or in the JSON's field names; if it is meant, rerun
// with -update-golden and read the diff.
func TestTableGolden(t *testing.T) {
	rep := goldenReport()
	var table bytes.Buffer
	printTable(&table, rep)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{{"table.golden", table.Bytes()}, {"report.golden.json", append(js, '\n')}} {
		path := filepath.Join("testdata", g.file)
		if *updateGolden {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestTableGolden -update-golden to create it)", err)
		}
		if !bytes.Equal(g.got, want) {
			t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, g.got, want)
		}
	}
}
