package singleflow

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/transport"
)

func info(ms int, ca uint8, cwnd uint32) transport.TCPInfo {
	return transport.TCPInfo{At: time.Duration(ms) * time.Millisecond, CAState: ca, CwndSegments: cwnd}
}

func TestTCPBackoffs(t *testing.T) {
	s := []transport.TCPInfo{
		info(0, 0, 20), info(5, 1, 20), info(10, 3, 19), info(15, 3, 16), info(20, 0, 14), // 20 -> 14
		info(25, 0, 15), info(30, 4, 1), info(35, 4, 3), info(40, 0, 6), // 15 -> 6 (an RTO)
		info(45, 3, 6), // an episode still open at the end: not counted
	}
	got := tcpBackoffs(s)
	want := []float64{14.0 / 20, 6.0 / 15}
	if len(got) != len(want) {
		t.Fatalf("backoffs %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("backoff %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestQUICBackoffs(t *testing.T) {
	m := func(ms, cwnd int) transport.QUICMetric {
		return transport.QUICMetric{At: time.Duration(ms) * time.Millisecond, CongestionWindow: cwnd}
	}
	st := func(ms int, s string) transport.QUICCongestionState {
		return transport.QUICCongestionState{At: time.Duration(ms) * time.Millisecond, State: s}
	}
	metrics := []transport.QUICMetric{m(0, 10000), m(10, 20000), m(30, 14000), m(40, 14000), m(60, 15000), m(90, 10500)}
	states := []transport.QUICCongestionState{st(0, "slow_start"), st(25, "recovery"), st(50, "congestion_avoidance"), st(85, "recovery")}
	got := quicBackoffs(metrics, states)
	if len(got) != 2 || math.Abs(got[0]-0.7) > 1e-9 || math.Abs(got[1]-0.7) > 1e-9 {
		t.Fatalf("backoffs %v, want [0.7 0.7]", got)
	}
}

func TestSummariseAndCompare(t *testing.T) {
	rs := []Result{
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.0, Backoffs: []float64{0.7}},
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.4, Backoffs: []float64{0.7, 0.7}},
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.2},
		{Profile: "80:10", Loss: 1, Flow: "tcp-x", GoodputMbit: 1.5},
		{Profile: "80:10", Loss: 1, Flow: "tcp-x", GoodputMbit: 1.6},
		{Profile: "80:10", Loss: 1, Flow: "tcp-x", Error: "dialling: refused"},
	}
	cells := Summarise(rs)
	if len(cells) != 2 {
		t.Fatalf("%d cells, want 2", len(cells))
	}
	q, x := cells[0], cells[1]
	if q.Runs != 3 || q.Goodput != 2.2 || math.Abs(q.Spread-0.4) > 1e-9 || q.Episodes != 3 || q.Backoff != 0.7 {
		t.Errorf("quic cell %+v", q)
	}
	if x.Runs != 2 || x.Failed != 1 || math.Abs(x.Goodput-1.55) > 1e-9 {
		t.Errorf("tcp-x cell %+v: want 2 runs, 1 failed, median 1.55", x)
	}
	ms := compareFlows(cells, "tcp-x", "quic")
	if len(ms) != 1 {
		t.Fatalf("%d matches, want 1", len(ms))
	}
	if ms[0].Within || ms[0].InRange || math.Abs(ms[0].Delta+0.65) > 1e-9 || math.Abs(ms[0].Threshold-0.4) > 1e-9 {
		t.Errorf("match %+v: want delta -0.65 outside threshold 0.4", ms[0])
	}
	// Within the wider spread: 2.2 - 0.35 against 0.4.
	rs[3].GoodputMbit, rs[4].GoodputMbit = 1.8, 1.9
	ms = compareFlows(Summarise(rs), "tcp-x", "quic")
	if !ms[0].Within {
		t.Errorf("delta %v within threshold %v not called within", ms[0].Delta, ms[0].Threshold)
	}
}

func TestParseFlows(t *testing.T) {
	fs, err := ParseFlows([]string{"quic", "tcp-reno", "tcp-quicreno"})
	if err != nil || len(fs) != 3 {
		t.Fatalf("ParseFlows: %+v, %v", fs, err)
	}
	if cc, pinned := fs[1].PinnedCC(); cc != "reno" || !pinned || fs[0] != measure.QUIC || fs[2] != "tcp-quicreno" {
		t.Errorf("ParseFlows: %+v", fs)
	}
	for _, bad := range []string{"udp", "tcp", "tcp-mux", "quic-per-channel", "tcp-"} {
		if _, err := ParseFlows([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("flow %s: %v; want it refused, named", bad, err)
		}
	}
	c := Defaults()
	c.Flows = append(c.Flows, c.Flows[0])
	c.Repeats = 0
	if err := c.Validate(); err == nil {
		t.Error("accepted a flow given twice and 0 repeats")
	}
}

// TestCellsWithoutEpisodesOrRuns: a cell with no loss episode and one
// whose every run failed encode as JSON, their missing medians null, and
// the table shows them as "-".
func TestCellsWithoutEpisodesOrRuns(t *testing.T) {
	rs := []Result{
		{Profile: "20:20", Loss: 0, Flow: "quic", GoodputMbit: 19},
		{Profile: "20:20", Loss: 0, Flow: "tcp-reno", Error: "dialling: refused"},
	}
	cells := Summarise(rs)
	b, err := json.Marshal(struct{ Cells []Cell }{cells})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Cells []map[string]any }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	q, x := back.Cells[0], back.Cells[1]
	if q["backoff"] != nil || q["Goodput"] != 19.0 || q["episodes"] != 0.0 || q["flow"] != "quic" {
		t.Errorf("the cell without an episode: %s", b)
	}
	for _, k := range []string{"Goodput", "GoodputMin", "GoodputMax", "Spread", "backoff", "initial_window_packets", "first_rtt_bytes"} {
		if v, ok := x[k]; !ok || v != nil {
			t.Errorf("the failed cell's %s is %v, want null: %s", k, v, b)
		}
	}
	if md := Markdown(cells, "tcp-reno", "quic"); strings.Contains(md, "NaN") || !strings.Contains(md, "| tcp-reno | 0 (1 failed) | - |") {
		t.Errorf("the table:\n%s", md)
	}
}

// TestUnknownControllerRefused: a tcp flow whose controller the kernel
// does not list, or that is not a controller's name, is refused by
// Validate, before anything runs.
func TestUnknownControllerRefused(t *testing.T) {
	for _, name := range []string{"tcp-quicreno2", "tcp-nosuchcc", "tcp-../../x", "tcp-a b"} {
		fs, err := ParseFlows([]string{name})
		if err != nil {
			continue
		}
		c := Defaults()
		c.Flows = fs
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v; want it refused, named", name, err)
		}
	}
}
