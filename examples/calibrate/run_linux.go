package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
	"github.com/shakenfist/quicbench/shapedlink"
)

// prepare gets the privilege to build links: see shapedlink.Reexec.
func prepare() error { return shapedlink.Reexec() }

// plan is what a run measures, read from its flags.
type plan struct {
	profiles   []shapedlink.Profile
	rates      []float64 // -sweep
	iperfRates []float64
	discs      []string
	qdiscAt    shapedlink.Profile
}

// makePlan checks c's lists and reads them into a plan.
func makePlan(c config) (pl plan, err error) {
	if strings.TrimSpace(c.profiles) != "" {
		if pl.profiles, err = shapedlink.ParseProfiles(c.profiles); err != nil {
			return plan{}, err
		}
	}
	if pl.rates, err = parseRates("-sweep", c.sweep); err != nil {
		return plan{}, err
	}
	if pl.iperfRates, err = parseRates("-iperf3", c.iperf); err != nil {
		return plan{}, err
	}
	pl.discs = strings.Fields(c.qdisc)
	for _, d := range pl.discs {
		if d != "fifo" && d != "codel" && d != "fq_codel" {
			return plan{}, fmt.Errorf("-qdisc names %q; the disciplines are fifo, codel and fq_codel", d)
		}
	}
	if len(pl.discs) > 0 {
		if pl.qdiscAt, err = shapedlink.ParseProfile(c.qdiscAt); err != nil {
			return plan{}, fmt.Errorf("-qdisc-profile: %w", err)
		}
	}
	if len(pl.profiles) == 0 && len(pl.rates) == 0 && len(pl.iperfRates) == 0 && len(pl.discs) == 0 && c.gsoLoss == nil && c.quicGSO == nil {
		return plan{}, errors.New("nothing to measure: -profiles, -sweep, -iperf3, -qdisc, -gsoloss and -quicgso are all empty")
	}
	if _, err := exec.LookPath("iperf3"); len(pl.iperfRates) > 0 && err != nil {
		return plan{}, errors.New("-iperf3 needs iperf3 on PATH (Debian: apt-get install iperf3)")
	}
	return pl, nil
}

// run checks c's lists and measures each profile, each sweep rate, each
// queue discipline, the iperf3 series, the UDP_SEGMENT loss and the
// quic-go transfer, in that order, every link in c's offload mode.
func run(ctx context.Context, c config, log *slog.Logger) (Report, error) {
	pl, err := makePlan(c)
	if err != nil {
		return Report{}, err
	}
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	rep := Report{Started: time.Now().UTC(), Host: host, Load: strings.TrimSpace(string(load)), Build: buildinfo.Read(), Offload: c.offloadMode.String()}
	opts := shapedlink.Options{Backend: shapedlink.Backend(c.backend), Seed: c.seed, Logger: log, Offload: c.offloadMode}
	for _, p := range pl.profiles {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		log.Info("calibrate: profile", "profile", p.String())
		rep.Results = append(rep.Results, calibrate(ctx, c, p, opts))
	}
	for _, r := range pl.rates {
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
	if len(pl.discs) > 0 {
		log.Info("calibrate: queue disciplines", "disciplines", c.qdisc, "profile", pl.qdiscAt.String())
		rep.Qdisc = qdiscSeries(ctx, c, pl.qdiscAt, pl.discs, opts)
	}
	if len(pl.iperfRates) > 0 {
		log.Info("calibrate: iperf3", "rates_mbit", c.iperf, "offload", rep.Offload)
		fs, err := iperfSeries(ctx, c, pl.iperfRates, opts)
		rep.Iperf = fs
		if err != nil {
			return rep, err
		}
	}
	if c.gsoLoss != nil && ctx.Err() == nil {
		log.Info("calibrate: UDP_SEGMENT loss", "link", c.gsoLossSpec, "offload", rep.Offload)
		rep.GSOLoss = gsoLossRun(ctx, c, *c.gsoLoss, opts)
	}
	if c.quicGSO != nil && ctx.Err() == nil {
		log.Info("calibrate: quic-go with GSO", "link", c.quicGSOSpec, "offload", rep.Offload)
		rep.QUICGSO = quicGSORun(ctx, c, *c.quicGSO, opts)
	}
	return rep, ctx.Err()
}

// parseRates reads a space-separated list of positive rates in Mbit/s.
func parseRates(flagName, s string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Fields(s) {
		r, err := strconv.ParseFloat(f, 64)
		if err != nil || !(r > 0) || r > 100000 {
			return nil, fmt.Errorf("%s: %q is not a rate in Mbit/s between 0 and 100000", flagName, f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}
