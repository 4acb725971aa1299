package calibrate

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Run measures what c asks for: each profile, each sweep rate, each queue
// discipline, the iperf3 series, the UDP_SEGMENT flood and the quic-go
// transfer, in that order, every link built with c.Link. It needs the
// privilege to build links (root, or shapedlink.Reexec first).
//
// A measurement that fails records its error in the report and the run
// goes on (Report.Failures lists them); Run returns an error, with the
// report so far, only for a c that Validate refuses, an iperf3 series it
// could not set up, or ctx ending.
func Run(ctx context.Context, c Config) (Report, error) {
	if err := c.Validate(); err != nil {
		return Report{}, err
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	rep := Report{Started: time.Now().UTC(), Host: host, Load: strings.TrimSpace(string(load)), Build: buildinfo.Read(), Offload: c.Link.Offload.String(), KeepAwake: c.KeepAwake,
		DepartureWindowUs: c.DepartureWindow.Microseconds()}
	opts := c.Link
	opts.EmulatorKeepAwake, opts.EmulatorKeepAwakeAuto, opts.EmulatorDepartureWindow = c.KeepAwake, c.KeepAwakeAuto, c.DepartureWindow
	if c.KeepAwakeAuto {
		// The probe the links decide by (once per process), taken here
		// with no link up.
		p, err := shapedlink.ProbeWake()
		if err != nil {
			return rep, fmt.Errorf("calibrate: %w", err)
		}
		rep.WakeProbe = &p
		log.Info("calibrate: timer wake-up probe", "keep_awake", p.KeepAwake, "p99_ms", p.P99Ms, "max_ms", p.MaxMs)
	}
	if c.TraceLate > 0 && len(c.Profiles) > 0 {
		if c.TraceDir != "" {
			if err := os.MkdirAll(c.TraceDir, 0o755); err != nil {
				return rep, fmt.Errorf("calibrate: the trace directory: %w", err)
			}
		}
		t, err := openTracer()
		if err != nil {
			return rep, err
		}
		defer func() {
			if err := t.close(); err != nil {
				log.Error("calibrate: restoring tracing as it was", "error", err)
			}
		}()
		c.tracer = t
		opts.EmulatorLateMarker = c.TraceLate
	}
	for _, p := range c.Profiles {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		log.Info("calibrate: profile", "profile", p.String())
		rep.Results = append(rep.Results, profileRun(ctx, c, p, opts))
	}
	for _, r := range c.SweepRates {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		log.Info("calibrate: sweep", "rate_mbit", r)
		s := sweep(ctx, c, r, opts)
		rep.Sweep = append(rep.Sweep, s)
		ok := s.Bulk.Error == "" && s.Bulk.WirePct >= 95 || s.Cubic.Error == "" && s.Cubic.WirePct >= 95
		if s.Error == "" && ok && r > rep.HighestOKMbit {
			rep.HighestOKMbit = r
		}
	}
	if len(c.Qdiscs) > 0 {
		log.Info("calibrate: queue disciplines", "disciplines", strings.Join(c.Qdiscs, " "), "profile", c.QdiscProfile.String())
		rep.Qdisc = qdiscSeries(ctx, c, c.QdiscProfile, c.Qdiscs, opts)
	}
	if len(c.IperfRates) > 0 {
		log.Info("calibrate: iperf3", "rates_mbit", rateList(c.IperfRates), "offload", rep.Offload)
		fs, err := iperfSeries(ctx, c, c.IperfRates, opts)
		rep.Iperf = fs
		if err != nil {
			return rep, err
		}
	}
	if c.GSOLoss != nil && ctx.Err() == nil {
		log.Info("calibrate: UDP_SEGMENT loss", "link", c.GSOLoss.String(), "offload", rep.Offload)
		rep.GSOLoss = gsoLossRun(ctx, c, *c.GSOLoss, opts)
	}
	if c.QUICGSO != nil && ctx.Err() == nil {
		log.Info("calibrate: quic-go with GSO", "link", c.QUICGSO.String(), "offload", rep.Offload)
		rep.QUICGSO = quicGSORun(ctx, c, *c.QUICGSO, opts)
	}
	return rep, ctx.Err()
}

// rateList is rates as a space-separated list.
func rateList(rates []float64) string {
	var s []string
	for _, r := range rates {
		s = append(s, fmt.Sprint(r))
	}
	return strings.Join(s, " ")
}
