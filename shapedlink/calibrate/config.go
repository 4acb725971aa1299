package calibrate

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Config is what Run measures and how. Each list or pointer left empty
// skips its measurement; at least one must be set. The examples/calibrate
// flag that sets each field is named in its comment.
type Config struct {
	// Link is how every link of the run is built: backend, seed, offload
	// mode and logger (-backend, -seed, -offload). Every bare veth pair
	// beside a link has the same offload mode, except the iperf3
	// series' two, which are one of each. KeepAwake and KeepAwakeAuto,
	// not Link's fields, say whether the CPUs are kept awake.
	Link shapedlink.Options
	// KeepAwake builds every link with Link.EmulatorKeepAwake: one busy
	// loop at SCHED_IDLE per CPU for as long as the link is up, so that
	// no CPU halts under the emulator's timers (-keep-awake on). It
	// needs Link.Backend to be the emulator or automatic (a link for
	// which netem is chosen does not use it); the bare veth
	// pairs, which have no emulator, are built without it.
	// Report.KeepAwake records it.
	KeepAwake bool
	// KeepAwakeAuto builds every link with Link.EmulatorKeepAwakeAuto
	// instead (-keep-awake auto): the host is probed once
	// (shapedlink.ProbeWake) before the first link, and the CPUs kept
	// awake when its timer wake-ups were late. Report.WakeProbe records
	// the probe. Give it or KeepAwake, not both; as KeepAwake, it needs
	// the emulator or automatic.
	KeepAwakeAuto bool
	// DepartureWindow builds every link with
	// Link.EmulatorDepartureWindow (-departure-window): when a held
	// segment falls due, those due within the window leave with it (200
	// us by default). As KeepAwake, it needs the emulator or automatic;
	// the bare pairs are built without it. Report.DepartureWindowUs
	// records it.
	DepartureWindow time.Duration
	// Logger receives a line as each measurement starts; nil logs nothing.
	Logger *slog.Logger

	// Profiles are calibrated in order, each on a fresh link (-profiles):
	// the bare pair's and the link's idle round trip, the UDP echo, then
	// for a link that stays put the two bulk flows, the loss run and (with
	// jitter down) the jitter fit, or for a link whose down direction has
	// a trace or a schedule its fidelity instead (Result).
	Profiles []shapedlink.Profile
	// Echoes is how many ICMP probes, and UDP echoes, measure each idle
	// round trip, Interval the probes' spacing, 1 ms to 1 s (-echoes,
	// -interval).
	Echoes   int
	Interval time.Duration
	// Bare measures the ICMP probe over an unshaped veth pair before each
	// profile (-bare).
	Bare bool
	// Noise runs a background load (NoiseLoad) while the idle round trip
	// is measured: NoiseOn for every profile, NoiseBoth once without and
	// once with it (-noise). "" is NoiseOff.
	Noise Noise
	// TraceLate, when positive, catches an emulator stall in the act
	// (-trace-late): while each idle round trip is probed, the kernel
	// traces scheduler, interrupt and workqueue events and stops at the
	// first frame the emulator sends later than this; the trace is saved
	// in TraceDir ("" is the working directory) with a short reading
	// (Result.LateTrace). It needs root and the emulator backend; tracing
	// is left as it was found.
	TraceLate time.Duration
	TraceDir  string

	tracer *tracer // the session while Run runs with TraceLate
	// Bulk is how long each bulk TCP flow, -qdisc flow and quic-go
	// transfer runs, at least 300 ms; the first third is discarded
	// (-bulk). The iperf3 flows run it rounded to seconds, at least 3.
	Bulk time.Duration
	// LossPackets is how many datagrams the loss run sends (-losspkts).
	LossPackets int
	// JitterProbes is how many one-way probes fit a jittered profile's
	// delay distribution; 0 skips the fit (-jitter-probes).
	JitterProbes int
	// TimeVarying is how long a trace or a schedule is flooded or probed
	// (-timevarying).
	TimeVarying time.Duration

	// SweepRates are the rates (Mbit/s, at most 100000) of the
	// highest-sustained-rate search at 5 ms RTT (-sweep): Sweep.
	SweepRates []float64
	// IperfRates are the rates of the iperf3 series at 5 ms RTT, beside
	// both bare pairs and an unlimited link (-iperf3): Iperf. It needs
	// iperf3 on PATH.
	IperfRates []float64
	// Qdiscs are the queue disciplines measured on QdiscProfile: "fifo",
	// "codel" or "fq_codel" (-qdisc, -qdisc-profile): Qdisc.
	Qdiscs       []string
	QdiscProfile shapedlink.Profile
	// GSOLoss is the link of the UDP_SEGMENT loss flood, paced to
	// GSOPacePct (above 0, at most 100) of its rate for GSOTime (500 ms to
	// 10 min) (-gsoloss, -gsoloss-pace, -gsoloss-time): GSOLoss. It must
	// pass CheckFixed.
	GSOLoss    *shapedlink.Profile
	GSOPacePct float64
	GSOTime    time.Duration
	// QUICGSO is the link of the quic-go transfer with GSO (-quicgso):
	// QUICGSO. It must pass CheckFixed.
	QUICGSO *shapedlink.Profile
}

// DefaultConfig is calibrate's defaults: the eight default profiles
// (80:10, 150:2, 20:100 and 5:1000, each at 0% and 1% loss), 200 probes
// 10 ms apart beside the bare pair, 9 s bulk flows, 4000 loss datagrams,
// 400 jitter probes, 12 s of trace or schedule, and the sweep at 200,
// 500, 1000 and 2000 Mbit/s, on wire-sized links with emulator seed 1.
// The queue discipline profile and the UDP_SEGMENT flood's pace and time
// are set, the measurements themselves not.
func DefaultConfig() Config {
	var profiles []shapedlink.Profile
	for _, p := range []struct{ rttMs, rateMbit float64 }{{80, 10}, {150, 2}, {20, 100}, {5, 1000}} {
		for _, loss := range []float64{0, 1} {
			// Valid by construction (TestDefaultConfig).
			pr, _ := shapedlink.NewProfile(time.Duration(p.rttMs*float64(time.Millisecond)), p.rateMbit, loss)
			profiles = append(profiles, pr)
		}
	}
	qdiscAt, _ := shapedlink.NewProfile(80*time.Millisecond, 10, 0)
	return Config{
		Link:     shapedlink.Options{Seed: 1},
		Profiles: profiles, Echoes: 200, Interval: 10 * time.Millisecond, Bare: true,
		Bulk: 9 * time.Second, LossPackets: 4000, JitterProbes: 400, TimeVarying: 12 * time.Second,
		SweepRates: []float64{200, 500, 1000, 2000}, QdiscProfile: qdiscAt,
		GSOPacePct: 60, GSOTime: 8 * time.Second,
	}
}

// emulatorMayRun reports whether links built with b may have the
// emulator: b is it, or b is left to choose.
func emulatorMayRun(b shapedlink.Backend) bool {
	return b == shapedlink.BackendEmulator || b == shapedlink.BackendAuto
}

// Validate says what in c Run cannot measure, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Echoes < 1, c.LossPackets < 1, c.JitterProbes < 0:
		return fmt.Errorf("calibrate: Echoes %d and LossPackets %d must be positive and JitterProbes %d not negative", c.Echoes, c.LossPackets, c.JitterProbes)
	case c.Bulk < 300*time.Millisecond:
		return fmt.Errorf("calibrate: Bulk %v: give the flows at least 300ms", c.Bulk)
	case c.Interval < time.Millisecond || c.Interval > time.Second:
		return fmt.Errorf("calibrate: Interval %v: space the probes between 1ms and 1s", c.Interval)
	case c.Noise != "" && c.Noise != NoiseOff && c.Noise != NoiseOn && c.Noise != NoiseBoth:
		return fmt.Errorf("calibrate: Noise %q: say off, on or both", c.Noise)
	case c.KeepAwake && c.KeepAwakeAuto:
		return errors.New("calibrate: KeepAwake and KeepAwakeAuto are both set: give one (on, or decided by probing the host)")
	case c.KeepAwakeAuto && !emulatorMayRun(c.Link.Backend):
		return fmt.Errorf("calibrate: KeepAwakeAuto (-keep-awake auto) decides keep-awake for the emulator, and Link.Backend is %q: set it to %q or leave it empty, or turn KeepAwakeAuto off", c.Link.Backend, shapedlink.BackendEmulator)
	case c.KeepAwake && !emulatorMayRun(c.Link.Backend):
		return fmt.Errorf("calibrate: KeepAwake (-keep-awake) keeps the CPUs awake for the emulator, and Link.Backend is %q: set it to %q or leave it empty, or turn KeepAwake off", c.Link.Backend, shapedlink.BackendEmulator)
	case c.DepartureWindow != 0 && !emulatorMayRun(c.Link.Backend):
		return fmt.Errorf("calibrate: DepartureWindow (-departure-window) batches the emulator's departures, and Link.Backend is %q: set it to %q or leave it empty, or give 0 (-departure-window 0)", c.Link.Backend, shapedlink.BackendEmulator)
	case c.DepartureWindow < 0 || c.DepartureWindow > shapedlink.MaxDepartureWindow:
		return fmt.Errorf("calibrate: DepartureWindow %v: give 0 (each segment at its due time) up to %v", c.DepartureWindow, shapedlink.MaxDepartureWindow)
	case c.TraceLate < 0:
		return fmt.Errorf("calibrate: TraceLate %v: give a positive lateness, or 0 for no trace", c.TraceLate)
	case len(c.Profiles) == 0 && len(c.SweepRates) == 0 && len(c.IperfRates) == 0 && len(c.Qdiscs) == 0 && c.GSOLoss == nil && c.QUICGSO == nil:
		return errors.New("calibrate: nothing to measure: Profiles, SweepRates, IperfRates, Qdiscs, GSOLoss and QUICGSO are all empty")
	}
	for _, rs := range [][]float64{c.SweepRates, c.IperfRates} {
		for _, r := range rs {
			if !(r > 0) || r > 100000 {
				return fmt.Errorf("calibrate: rate %g: give rates in Mbit/s between 0 and 100000", r)
			}
		}
	}
	for _, d := range c.Qdiscs {
		if !ValidQdisc(d) {
			return fmt.Errorf("calibrate: Qdiscs names %q; the disciplines are fifo, codel and fq_codel", d)
		}
	}
	for _, f := range []struct {
		name string
		p    *shapedlink.Profile
	}{{"GSOLoss", c.GSOLoss}, {"QUICGSO", c.QUICGSO}} {
		if f.p == nil {
			continue
		}
		if err := CheckFixed(*f.p); err != nil {
			return fmt.Errorf("calibrate: %s %q: %w", f.name, f.p.String(), err)
		}
	}
	if c.GSOLoss != nil && (!(c.GSOPacePct > 0) || c.GSOPacePct > 100 || c.GSOTime < 500*time.Millisecond || c.GSOTime > 10*time.Minute) {
		return fmt.Errorf("calibrate: GSOPacePct %g and GSOTime %v: pace the sender above 0 and at most 100%% of the rate, for 500ms to 10m", c.GSOPacePct, c.GSOTime)
	}
	if _, err := exec.LookPath("iperf3"); len(c.IperfRates) > 0 && err != nil {
		return errors.New("calibrate: IperfRates needs iperf3 on PATH (Debian: apt-get install iperf3)")
	}
	return nil
}

// ValidQdisc reports whether name is a discipline Qdiscs takes: fifo,
// codel or fq_codel.
func ValidQdisc(name string) bool { return name == "fifo" || name == "codel" || name == "fq_codel" }

// CheckFixed says why p cannot carry the GSOLoss or QUICGSO measurement,
// or nil when it can. Their figures count what the link's loss took, so
// a link that also duplicates, corrupts or reorders, or whose rate or
// delay follows a schedule or a trace, is refused, naming the direction
// and what it has.
func CheckFixed(p shapedlink.Profile) error {
	for _, d := range []shapedlink.Dir{shapedlink.Down, shapedlink.Up} {
		pd := p.Direction(d)
		var what []string
		for _, o := range []struct {
			on   bool
			name string
		}{{pd.DupPct > 0, "dup"}, {pd.CorruptPct > 0, "corrupt"}, {pd.ReorderPct > 0, "reorder"}, {pd.Schedule != "", "schedule"}, {pd.Trace != "", "trace"}} {
			if o.on {
				what = append(what, o.name)
			}
		}
		if len(what) > 0 {
			return fmt.Errorf("its %s direction has %s; this measurement counts what the link's loss takes on a fixed link, so give a profile with a rate, a delay, loss (independent, ge: or state:) and a limit only, e.g. 5:2000:0.1", d, strings.Join(what, ", "))
		}
	}
	return nil
}
