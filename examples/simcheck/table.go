package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// The carriers a profile runs on, in the table's order. The emulator is
// the reference the others are read against.
const (
	onEmulator = "emulator"
	onRealTime = "inproc, real time"
	onVirtual  = "inproc, virtual time"
)

// The targets the in-process link is read against, beside the emulator.
const (
	goodputTarget = 3.0                    // percent
	p50Target     = 200 * time.Microsecond // absolute
)

// row is one profile on one carrier: the probes' results, or why it did
// not run.
type row struct {
	profile, carrier string
	err              error
	goodput          float64 // Mbit/s
	echo             echoResult
	lost             []bool
}

// writeTable writes the rows, grouped by profile in the order given, with
// each in-process row's difference from the emulator's and whether it
// meets the targets.
func writeTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tcarrier\tgoodput Mbit/s\tvs emulator\tp50 RTT\tvs emulator\tp99 RTT\tlost echoes\tlost datagrams\tloss pattern\ttargets")
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t%s\t(did not run: %v)\n", r.profile, r.carrier, r.err)
			continue
		}
		ref := reference(rows, r)
		dg, dp, pat, verdict := compare(r, ref)
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%s\t%s\t%d/%d\t%d/%d\t%s\t%s\n", r.profile, r.carrier,
			r.goodput, dg, ms(r.echo.p50), dp, ms(r.echo.p99), r.echo.lost, r.echo.sent, count(r.lost), len(r.lost), pat, verdict)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "targets: goodput within %.0f%% and p50 round trip within %v of the emulator's (not in virtual time, where no host takes part), and the same datagrams lost\n",
		goodputTarget, p50Target)
}

// verdict says how many rows did not run and how many of those read
// against the emulator missed the targets, or nil when none.
func verdict(rows []row) error {
	notRun, compared, missed := 0, 0, 0
	for _, r := range rows {
		if r.err != nil {
			notRun++
			continue
		}
		ref := reference(rows, r)
		if ref == nil {
			continue
		}
		compared++
		if _, _, _, v := compare(r, ref); strings.HasPrefix(v, "missed") {
			missed++
		}
	}
	var parts []string
	if notRun > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d rows did not run (the table says why)", notRun, len(rows)))
	}
	if missed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d rows read against the emulator missed the targets", missed, compared))
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// reference is the emulator's row for r's profile, when it ran and r is
// not it.
func reference(rows []row, r row) *row {
	if r.carrier == onEmulator {
		return nil
	}
	for i := range rows {
		if rows[i].profile == r.profile && rows[i].carrier == onEmulator && rows[i].err == nil {
			return &rows[i]
		}
	}
	return nil
}

// compare reads r against the emulator's row: the goodput's difference
// in percent, the p50's in milliseconds, whether the same datagrams were
// lost, and whether r meets every target ("-" without a reference).
func compare(r row, ref *row) (goodput, p50, pattern, verdict string) {
	if ref == nil {
		return "-", "-", "-", "-"
	}
	dg := 100 * (r.goodput - ref.goodput) / ref.goodput
	dp := r.echo.p50 - ref.echo.p50
	var miss []string
	if math.Abs(dg) > goodputTarget || math.IsNaN(dg) {
		miss = append(miss, "goodput")
	}
	if dp.Abs() > p50Target && r.carrier != onVirtual {
		miss = append(miss, "p50")
	}
	pattern = "identical"
	if i := firstDifference(r.lost, ref.lost); i >= 0 {
		pattern = fmt.Sprintf("differs from #%d", i)
		miss = append(miss, "pattern")
	}
	verdict = "met"
	if r.carrier == onVirtual {
		verdict = "met (p50 not judged: no host)"
	}
	if len(miss) > 0 {
		verdict = fmt.Sprintf("missed: %v", miss)
	}
	return fmt.Sprintf("%+.1f%%", dg), fmt.Sprintf("%+.3f ms", float64(dp)/1e6), pattern, verdict
}

// firstDifference is the first index where a and b differ (a length
// difference counts), or -1.
func firstDifference(a, b []bool) int {
	if slices.Equal(a, b) {
		return -1
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func count(lost []bool) int {
	n := 0
	for _, l := range lost {
		if l {
			n++
		}
	}
	return n
}

// ms writes d in milliseconds to the microsecond.
func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }
