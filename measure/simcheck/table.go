package simcheck

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

// The targets the in-process link is read against, beside the emulator.
const (
	goodputTarget = 3.0                    // percent
	p50Target     = 200 * time.Microsecond // absolute
)

// Table is the agreement's rows, grouped by profile in the order given.
type Table struct {
	Rows []Row
}

// Write writes the rows, with each in-process row's difference from the
// emulator's and whether it meets the targets.
func (t Table) Write(w io.Writer) {
	rows := t.Rows
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tcarrier\tgoodput Mbit/s\tvs emulator\tp50 RTT\tvs emulator\tp99 RTT\tlost echoes\tlost datagrams\tloss pattern\ttargets")
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t(did not run: %v)\n", r.Profile, r.Carrier, r.Err)
			continue
		}
		ref := reference(rows, r)
		dg, dp, pat, verdict := compare(r, ref)
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%s\t%s\t%d/%d\t%d/%d\t%s\t%s\n", r.Profile, r.Carrier,
			r.Goodput, dg, ms(r.Echo.P50), dp, ms(r.Echo.P99), r.Echo.Lost, r.Echo.Sent, count(r.Lost), len(r.Lost), pat, verdict)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "targets: goodput within %.0f%% and p50 round trip within %v of the emulator's (not in virtual time, where no host takes part), and the same datagrams lost\n",
		goodputTarget, p50Target)
}

// Verdict says how many rows did not run and how many of those read
// against the emulator missed the targets, or nil when none.
func (t Table) Verdict() error {
	rows := t.Rows
	notRun, compared, missed := 0, 0, 0
	for _, r := range rows {
		if r.Err != nil {
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
func reference(rows []Row, r Row) *Row {
	if r.Carrier == onEmulator {
		return nil
	}
	for i := range rows {
		if rows[i].Profile == r.Profile && rows[i].Carrier == onEmulator && rows[i].Err == nil {
			return &rows[i]
		}
	}
	return nil
}

// compare reads r against the emulator's row: the goodput's difference
// in percent, the p50's in milliseconds, whether the same datagrams were
// lost, and whether r meets every target ("-" without a reference).
func compare(r Row, ref *Row) (goodput, p50, pattern, verdict string) {
	if ref == nil {
		return "-", "-", "-", "-"
	}
	dg := 100 * (r.Goodput - ref.Goodput) / ref.Goodput
	dp := r.Echo.P50 - ref.Echo.P50
	var miss []string
	if math.Abs(dg) > goodputTarget || math.IsNaN(dg) {
		miss = append(miss, "goodput")
	}
	if dp.Abs() > p50Target && r.Carrier != onVirtual {
		miss = append(miss, "p50")
	}
	pattern = "identical"
	if i := firstDifference(r.Lost, ref.Lost); i >= 0 {
		pattern = fmt.Sprintf("differs from #%d", i)
		miss = append(miss, "pattern")
	}
	verdict = "met"
	if r.Carrier == onVirtual {
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
