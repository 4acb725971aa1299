package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
)

// ownArm is an importer's arm: the tcp arm under another name.
type ownArm struct{ measure.Arm }

func (ownArm) Name() string { return "aa-own" }

func init() {
	if err := measure.Register(ownArm{measure.TCP}); err != nil {
		panic(err)
	}
}

// The arm names the summary reads others against are measure's built-in
// arms'.
func TestArmNamesAreMeasures(t *testing.T) {
	for name, arm := range map[string]measure.Arm{
		report.ArmTCP: measure.TCP, report.ArmQUIC: measure.QUIC, report.ArmQUICPerChannel: measure.QUICPerChannel,
		report.ArmQUICPriority: measure.QUICPriority, report.ArmTCPMux: measure.TCPMux,
	} {
		if arm.Name() != name {
			t.Errorf("report names %q for measure's arm %q", name, arm.Name())
		}
	}
}

// muxCell is one cell of tcp, quic, tcp-mux, an importer's registered arm
// and an arm of an archive that nothing here registered, given out of
// order.
func muxCell(cc string) []results.Run {
	c := results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	spec := func(arm string, p95 float64) reporttest.ArmSpec {
		return reporttest.ArmSpec{Arm: arm, P50: 80, P99: 300, RepeatP95: []float64{p95, p95 + 1, p95 + 2, p95 + 3, p95 + 4}, N: 200, Mbit: 9, ConnectMs: 80}
	}
	runs := reporttest.Cell(c, spec("ab-archived", 90), spec("tcp-mux", 140), spec("aa-own", 100), spec("quic", 120), spec("tcp", 100))
	for i := range runs {
		if runs[i].Arm == "tcp-mux" {
			runs[i].CongestionControl = []string{cc}
		}
	}
	return runs
}

// Arms are listed in the registry's order, the built-in ones first, an
// importer's after them, then arms nothing here registered, by name; and
// quic is read against tcp-mux as well as every arm against tcp.
func TestArmsFromTheRegistry(t *testing.T) {
	rep, err := report.Build(muxCell("reno"), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cells[0]
	var arms []string
	for _, a := range c.Arms {
		arms = append(arms, a.Arm)
	}
	if want := []string{"tcp", "quic", "tcp-mux", "aa-own", "ab-archived"}; !slices.Equal(arms, want) {
		t.Errorf("arms in the order %v, want %v", arms, want)
	}
	var pairs []string
	for _, cp := range c.Comparisons {
		pairs = append(pairs, cp.B+" against "+cp.A+": "+cp.Reading)
	}
	want := []string{"quic against tcp: QUIC worse", "tcp-mux against tcp: tcp-mux worse", "aa-own against tcp: unresolved",
		"ab-archived against tcp: ab-archived better", "quic against tcp-mux: QUIC better"}
	if !slices.Equal(pairs, want) {
		t.Errorf("readings\n%s\nwant\n%s", strings.Join(pairs, "\n"), strings.Join(want, "\n"))
	}
	md := markdown(t, muxCell("reno"), report.Options{})
	if !strings.Contains(md, "### Reading them: QUIC against tcp-mux") {
		t.Error("the markdown has no reading table of QUIC against tcp-mux")
	}
}

// tcp-mux pins the cell's kernel congestion control as tcp does, so a
// socket that reported another is warned about.
func TestTCPMuxCongestionControlWarned(t *testing.T) {
	rep, err := report.Build(muxCell("cubic"), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Warnings {
		if w.Kind == report.WarnCC && w.Arm == "tcp-mux" && strings.Contains(w.Detail, `"cubic"`) {
			return
		}
	}
	t.Errorf("no congestion-control warning for tcp-mux reporting cubic in a reno cell: %+v", rep.Warnings)
}

// In a cell of several sessions, quic is read against tcp-mux too.
func TestSessionsReadTCPMux(t *testing.T) {
	runs := sessionsRuns()
	for _, r := range sessionsRuns() {
		if r.Arm == "tcp" {
			r.Arm = "tcp-mux"
			runs = append(runs, r)
		}
	}
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, cp := range rep.Cells[0].Sessions.Comparisons {
		pairs = append(pairs, cp.B+" against "+cp.A)
	}
	if want := []string{"quic against tcp", "tcp-mux against tcp", "quic against tcp-mux"}; !slices.Equal(pairs, want) {
		t.Errorf("sessions readings %v, want %v", pairs, want)
	}
}

// An arm with a controller of its own (tcp-quicreno) is read against the
// QUIC arms as well as against tcp, is warned about only when its sockets
// ran another controller than its own, and its recorded settings are
// shown.
func TestControllerArm(t *testing.T) {
	build := func(ran string) (*report.Report, []results.Run) {
		c := results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
		spec := func(arm string, p95 float64) reporttest.ArmSpec {
			return reporttest.ArmSpec{Arm: arm, P50: 80, P99: 300, RepeatP95: []float64{p95, p95 + 1, p95 + 2, p95 + 3, p95 + 4}, N: 200, Mbit: 9, ConnectMs: 80}
		}
		runs := reporttest.Cell(c, spec("tcp", 100), spec("tcp-quicreno", 110), spec("quic", 160), spec("quic-per-channel", 100))
		for i := range runs {
			switch runs[i].Arm {
			case "tcp":
				runs[i].CongestionControl = []string{"server: reno", "client: reno"}
			case "tcp-quicreno":
				runs[i].CongestionControl = []string{"server: " + ran, "client: " + ran}
				runs[i].TCPController = "quicreno iw=32 beta=0.70"
			}
		}
		rep, err := report.Build(runs, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rep, runs
	}
	rep, runs := build("quicreno")
	var pairs []string
	for _, cp := range rep.Cells[0].Comparisons {
		pairs = append(pairs, cp.B+" against "+cp.A)
	}
	want := []string{"quic against tcp", "quic-per-channel against tcp", "tcp-quicreno against tcp",
		"quic against tcp-quicreno", "quic-per-channel against tcp-quicreno"}
	if !slices.Equal(pairs, want) {
		t.Errorf("readings %v, want %v", pairs, want)
	}
	for _, w := range rep.Warnings {
		if w.Kind == report.WarnCC {
			t.Errorf("warned about a controller arm that ran its own controller: %+v", w)
		}
	}
	if !strings.Contains(markdown(t, runs, report.Options{}), "quicreno iw=32 beta=0.70") {
		t.Error("the markdown does not show the controller's recorded settings")
	}
	warned := false
	renoRep, _ := build("reno")
	for _, w := range renoRep.Warnings {
		warned = warned || (w.Kind == report.WarnCC && w.Arm == "tcp-quicreno")
	}
	if !warned {
		t.Error("no warning for tcp-quicreno's sockets reporting reno")
	}
}
