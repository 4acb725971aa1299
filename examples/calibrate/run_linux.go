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

// run checks c's lists and measures each profile, each sweep rate, each
// queue discipline and the iperf3 series, in that order.
func run(ctx context.Context, c config, log *slog.Logger) (Report, error) {
	var profiles []shapedlink.Profile
	if strings.TrimSpace(c.profiles) != "" {
		var err error
		if profiles, err = shapedlink.ParseProfiles(c.profiles); err != nil {
			return Report{}, err
		}
	}
	rates, err := parseRates("-sweep", c.sweep)
	if err != nil {
		return Report{}, err
	}
	iperfRates, err := parseRates("-iperf3", c.iperf)
	if err != nil {
		return Report{}, err
	}
	discs := strings.Fields(c.qdisc)
	for _, d := range discs {
		if d != "fifo" && d != "codel" && d != "fq_codel" {
			return Report{}, fmt.Errorf("-qdisc names %q; the disciplines are fifo, codel and fq_codel", d)
		}
	}
	var qdiscAt shapedlink.Profile
	if len(discs) > 0 {
		if qdiscAt, err = shapedlink.ParseProfile(c.qdiscAt); err != nil {
			return Report{}, fmt.Errorf("-qdisc-profile: %w", err)
		}
	}
	if len(profiles) == 0 && len(rates) == 0 && len(iperfRates) == 0 && len(discs) == 0 {
		return Report{}, errors.New("nothing to measure: -profiles, -sweep, -iperf3 and -qdisc are all empty")
	}
	if _, err := exec.LookPath("iperf3"); len(iperfRates) > 0 && err != nil {
		return Report{}, errors.New("-iperf3 needs iperf3 on PATH (Debian: apt-get install iperf3)")
	}
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	rep := Report{Started: time.Now().UTC(), Host: host, Load: strings.TrimSpace(string(load)), Build: buildinfo.Read()}
	opts := shapedlink.Options{Backend: shapedlink.Backend(c.backend), Seed: c.seed, Logger: log}
	for _, p := range profiles {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		log.Info("calibrate: profile", "profile", p.String())
		rep.Results = append(rep.Results, calibrate(ctx, c, p, opts))
	}
	for _, r := range rates {
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
	if len(discs) > 0 {
		log.Info("calibrate: queue disciplines", "disciplines", c.qdisc, "profile", qdiscAt.String())
		rep.Qdisc = qdiscSeries(ctx, c, qdiscAt, discs, opts)
	}
	if len(iperfRates) > 0 {
		log.Info("calibrate: iperf3", "rates_mbit", c.iperf)
		fs, err := iperfSeries(ctx, c, iperfRates, opts)
		rep.Iperf = fs
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
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
