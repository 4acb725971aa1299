package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Result is one profile's calibration; the JSON output is a Report.
type Result struct {
	Profile  string   `json:"profile"`
	Backend  string   `json:"backend"`
	Applied  []string `json:"applied"`
	Priority string   `json:"emulator_priority,omitempty"`

	ExpectedRTTms float64 `json:"expected_rtt_ms"`
	Echoes        int     `json:"echoes_sent"`
	Answered      int     `json:"echoes_answered"`
	RTTMinMs      float64 `json:"rtt_min_ms"`
	RTTP50Ms      float64 `json:"rtt_p50_ms"`
	RTTP99Ms      float64 `json:"rtt_p99_ms"`
	RTTP50ErrMs   float64 `json:"rtt_p50_error_ms"`
	RTTP99ErrMs   float64 `json:"rtt_p99_error_ms"`
	// Baseline is the same echo tool over loopback inside the server's
	// namespace: what the measuring processes themselves add.
	BaselineP50Ms float64 `json:"echo_loopback_p50_ms"`
	BaselineP99Ms float64 `json:"echo_loopback_p99_ms"`

	Bulk []Bulk `json:"bulk"`

	LossSent      int     `json:"loss_sent"`
	LossDelivered int     `json:"loss_delivered"`
	LossPct       float64 `json:"loss_measured_pct"`
	LossLoPct     float64 `json:"loss_ci95_lo_pct"`
	LossHiPct     float64 `json:"loss_ci95_hi_pct"`
	LossInside    bool    `json:"loss_configured_inside_ci"`
	// LossShaperDrops is what the shaping itself dropped during the loss
	// run (loss and limit); the rest of the shortfall was lost elsewhere.
	LossShaperDrops uint64 `json:"loss_shaper_drops"`

	CPUPerPacketNs float64 `json:"emulator_cpu_ns_per_packet,omitempty"`
	Error          string  `json:"error,omitempty"`
}

// Bulk is one bulk TCP flow.
type Bulk struct {
	CC          string  `json:"cc"`
	Buffers     string  `json:"buffers"`
	GoodputMbit float64 `json:"goodput_mbit"`
	GoodputPct  float64 `json:"goodput_pct_of_rate"`
	WirePct     float64 `json:"wire_pct_of_rate"`
	// WireFrom says where WirePct came from: "shaper" (the emulator's own
	// count of the bytes it forwarded in the window) or "estimate"
	// (goodput scaled by a full frame over its payload, for netem).
	WireFrom string `json:"wire_from,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Sweep is one step of the highest-rate search.
type Sweep struct {
	RateMbit float64 `json:"rate_mbit"`
	Bulk     Bulk    `json:"bulk"`
	Cubic    Bulk    `json:"cubic"`
	CPUNs    float64 `json:"emulator_cpu_ns_per_packet,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// Report is everything calibrate measured.
type Report struct {
	Started       time.Time `json:"started"`
	Host          string    `json:"host"`
	Load          string    `json:"loadavg"`
	Results       []Result  `json:"results"`
	Sweep         []Sweep   `json:"sweep,omitempty"`
	HighestOKMbit float64   `json:"highest_rate_within_5pct_mbit"`
}

type config struct {
	profiles string
	backend  string
	echoes   int
	bulk     time.Duration
	lossPkts int
	sweep    string
	json     bool
	seed     uint64
	render   string
}

func main() {
	var c config
	flag.StringVar(&c.profiles, "profiles", "80:10 80:10:1 150:2 150:2:1 20:100 20:100:1 5:1000 5:1000:1",
		"profiles to calibrate (shapedlink grammar rtt_ms:rate_mbit[:loss_pct][@limit_pkts], space-separated)")
	flag.StringVar(&c.backend, "backend", "", `shaping backend: "" (auto: netem if the kernel has it), "netem" or "emulator"`)
	flag.IntVar(&c.echoes, "echoes", 200, "idle round-trip echoes per profile (at least 200 for the targets)")
	flag.DurationVar(&c.bulk, "bulk", 9*time.Second, "duration of each bulk TCP flow (the first third is discarded)")
	flag.IntVar(&c.lossPkts, "losspkts", 4000, "datagrams sent for the loss measurement")
	flag.StringVar(&c.sweep, "sweep", "200 500 1000 2000", `rates (Mbit/s) for the highest-sustained-rate search at 5 ms RTT; "" skips it`)
	flag.BoolVar(&c.json, "json", false, "print the figures as JSON instead of a table")
	flag.Uint64Var(&c.seed, "seed", 1, "emulator loss seed (0: random); recorded in the applied lines")
	flag.StringVar(&c.render, "render", "", "print the table for a report saved with -json (measures nothing)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "calibrate: unexpected arguments %q; see -h\n", flag.Args())
		os.Exit(2)
	}
	if c.echoes < 1 || c.lossPkts < 1 || c.bulk < 300*time.Millisecond {
		fmt.Fprintln(os.Stderr, "calibrate: -echoes and -losspkts must be positive and -bulk at least 300ms")
		os.Exit(2)
	}
	if c.render != "" {
		b, err := os.ReadFile(c.render)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			fmt.Fprintf(os.Stderr, "calibrate: %s is not a calibrate -json report: %v\n", c.render, err)
			os.Exit(1)
		}
		printTable(os.Stdout, rep)
		if failed, total := rep.failures(); len(failed) > 0 {
			// Rendering measures nothing, so it does not fail; it says
			// what the report holds.
			fmt.Fprintf(os.Stderr, "calibrate: the report records %s\n", failureLine(failed, total))
		}
		return
	}
	// Building links needs privilege: as an ordinary user this re-executes
	// the command inside a user and network namespace of its own and exits
	// with its status.
	if err := prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rep, err := run(ctx, c, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		if ctx.Err() != nil {
			os.Exit(130) // interrupted
		}
		os.Exit(1)
	}
	if c.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
	} else {
		printTable(os.Stdout, rep)
	}
	if failed, total := rep.failures(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: %s; the figures above are what was measured\n", failureLine(failed, total))
		os.Exit(1)
	}
}

// failures names the measurements in rep that failed, out of total. A
// measurement is one profile's calibration (its link, echoes, both bulk
// flows and the loss run) or one rate of the sweep (its link and both
// flows); it failed if any of its parts did.
func (rep Report) failures() (failed []string, total int) {
	for _, r := range rep.Results {
		total++
		bad := r.Error != ""
		for _, b := range r.Bulk {
			bad = bad || b.Error != ""
		}
		if bad {
			failed = append(failed, "profile "+r.Profile)
		}
	}
	for _, s := range rep.Sweep {
		total++
		if s.Error != "" || s.Bulk.Error != "" || s.Cubic.Error != "" {
			failed = append(failed, fmt.Sprintf("sweep %g Mbit/s", s.RateMbit))
		}
	}
	return failed, total
}

// failureLine is "N of M measurements failed (which)".
func failureLine(failed []string, total int) string {
	return fmt.Sprintf("%d of %d measurements failed (%s)", len(failed), total, strings.Join(failed, ", "))
}

func (r Result) lossy() bool {
	return !strings.HasSuffix(r.Profile, ":0") && strings.Count(strings.SplitN(r.Profile, "@", 2)[0], ":") == 2
}

// unusualBuffers is true when the flow did not get the buffers it asked
// for (unprivileged, the 32 MiB ones are capped by the host).
func (b Bulk) unusualBuffers() bool { return b.Buffers != "32MiB" && b.Buffers != "default" }

func mark(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func printTable(w io.Writer, rep Report) {
	fmt.Fprintf(w, "calibrate %s on %s, load %s\n", rep.Started.Format(time.RFC3339), rep.Host, rep.Load)
	for _, r := range rep.Results {
		for _, a := range r.Applied {
			fmt.Fprintf(w, "  %s: %s\n", r.Profile, a)
		}
		if r.Priority != "" {
			fmt.Fprintf(w, "  %s: emulator priority %s\n", r.Profile, r.Priority)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "profile\tbackend\texpected ms\tp50 err ms\t\tp99 err ms\t\tloopback p50/p99\t"+
		"bbr goodput\twire\t\tcubic goodput\twire\t\tloss % [95% CI]\t\tcpu/pkt\t")
	for _, r := range rep.Results {
		if r.Error != "" && r.Answered == 0 {
			fmt.Fprintf(tw, "%s\t%s\terror: %s\t\n", r.Profile, r.Backend, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.3f\t%s\t%+.3f\t%s\t", r.Profile, r.Backend, ms(r.ExpectedRTTms),
			r.RTTP50ErrMs, mark(r.RTTP50ErrMs <= 0.1 && r.RTTP50ErrMs >= -0.1), r.RTTP99ErrMs, mark(r.RTTP99ErrMs <= 0.5 && r.RTTP99ErrMs >= -0.5))
		fmt.Fprintf(tw, "%.3f/%.3f\t", r.BaselineP50Ms, r.BaselineP99Ms)
		for _, b := range r.Bulk {
			if b.Error != "" {
				fmt.Fprintf(tw, "error\t\t\t")
				continue
			}
			verdict := mark(b.WirePct >= 95)
			if r.lossy() {
				verdict = "n/a" // TCP's response to random loss, not the link's capacity
			}
			fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t%s\t", b.GoodputPct, b.WirePct, verdict)
		}
		fmt.Fprintf(tw, "%.2f [%.2f,%.2f]\t%s\t", r.LossPct, r.LossLoPct, r.LossHiPct, mark(r.LossInside))
		if r.CPUPerPacketNs > 0 {
			fmt.Fprintf(tw, "%.2fus\t", r.CPUPerPacketNs/1000)
		} else {
			fmt.Fprintf(tw, "-\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, r := range rep.Results {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Profile, r.Error)
		}
		for _, b := range r.Bulk {
			if b.Error != "" {
				fmt.Fprintf(w, "%s %s: %s\n", r.Profile, b.CC, b.Error)
			} else if b.unusualBuffers() {
				fmt.Fprintf(w, "%s %s: buffers %s\n", r.Profile, b.CC, b.Buffers)
			}
		}
	}
	for _, s := range rep.Sweep {
		for _, b := range []Bulk{s.Bulk, s.Cubic} {
			if b.Error != "" {
				fmt.Fprintf(w, "sweep %g Mbit/s %s: %s\n", s.RateMbit, b.CC, b.Error)
			} else if b.unusualBuffers() {
				fmt.Fprintf(w, "sweep %g Mbit/s %s: buffers %s\n", s.RateMbit, b.CC, b.Buffers)
			}
		}
	}
	if len(rep.Sweep) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "sweep at 5 ms RTT\tbbr Mbit/s\twire\t\tcubic Mbit/s\twire\t\tcpu/pkt\t")
		for _, s := range rep.Sweep {
			if s.Error != "" {
				fmt.Fprintf(tw, "%g Mbit/s\terror: %s\t\n", s.RateMbit, s.Error)
				continue
			}
			fmt.Fprintf(tw, "%g Mbit/s\t", s.RateMbit)
			for _, b := range []Bulk{s.Bulk, s.Cubic} {
				if b.Error != "" {
					fmt.Fprintf(tw, "error\t\t\t")
					continue
				}
				fmt.Fprintf(tw, "%.1f\t%.1f%%\t%s\t", b.GoodputMbit, b.WirePct, mark(b.WirePct >= 95))
			}
			fmt.Fprintf(tw, "%.2fus\t\n", s.CPUNs/1000)
		}
		tw.Flush()
		fmt.Fprintf(w, "highest rate with wire utilisation within 5%% of configured: %g Mbit/s\n", rep.HighestOKMbit)
	}
}
