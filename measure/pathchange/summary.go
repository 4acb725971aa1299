package pathchange

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Row is one loss level and arm over its repeats.
type Row struct {
	LossPct  float64 `json:"loss_pct"`
	Arm      string  `json:"arm"`
	Order    string  `json:"order"`
	Repeats  int     `json:"repeats"`
	Survived int     `json:"survived"`
	// Stall gaps over repeats; OpenStalls counts repeats whose stall had
	// not ended when the run did (their gap is a lower bound).
	Stall      Spread `json:"stall"`
	OpenStalls int    `json:"open_stalls"`
	// StallRTT is the round trip of the echo that ended each stall (closed
	// stalls only); Baseline the largest gap before the change.
	StallRTT Spread `json:"stall_rtt"`
	Recovery Spread `json:"recovery_p50"`
	Baseline Spread `json:"baseline_gap"`
	// Validated is QUIC's path validation time; ServerMoved when the
	// server first sent to the new address; both from the change.
	Validated   Spread `json:"validated"`
	ServerMoved Spread `json:"server_moved"`
	// ClientNoticed and ServerNoticed: when each application first saw a
	// problem, over the repeats where it did (N says how many).
	ClientNoticed Spread `json:"client_noticed"`
	ServerNoticed Spread `json:"server_noticed"`
	// Failures are the distinct first client errors, with counts.
	Failures []string `json:"failures,omitempty"`
	Failed   int      `json:"failed_runs"`
}

// Spread is the median and range of a figure over repeats; N is how many
// repeats had it.
type Spread struct {
	N      int           `json:"n"`
	Median time.Duration `json:"median_ns"`
	Min    time.Duration `json:"min_ns"`
	Max    time.Duration `json:"max_ns"`
}

func spreadOf(v []time.Duration) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Spread{N: len(s), Median: median(s), Min: s[0], Max: s[len(s)-1]}
}

func (s Spread) String() string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%s [%s–%s]", ms(s.Median), ms(s.Min), ms(s.Max))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
}

// summarise groups records by loss, arm and order.
func summarise(recs []Record) []Row {
	type key struct {
		loss       float64
		arm, order string
	}
	groups := map[key][]Record{}
	var keys []key
	for _, r := range recs {
		k := key{r.Cell.LossPct, r.Arm, r.Order}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.order != b.order {
			return a.order > b.order // make-first before break-first
		}
		if a.loss != b.loss {
			return a.loss < b.loss
		}
		return a.arm > b.arm // tcp before quic
	})
	var rows []Row
	for _, k := range keys {
		row := Row{LossPct: k.loss, Arm: k.arm, Order: k.order}
		var stall, srtt, recov, base, valid, moved, cn, sn []time.Duration
		fails := map[string]int{}
		for _, r := range groups[k] {
			row.Repeats++
			if r.Failed != "" {
				row.Failed++
				continue
			}
			if r.Survived {
				row.Survived++
			}
			stall = append(stall, r.Stall.Gap)
			if r.Stall.Open {
				row.OpenStalls++
			} else {
				srtt = append(srtt, r.Stall.RTT)
				if r.Stall.RecoveryN > 0 {
					recov = append(recov, r.Stall.RecoveryP50)
				}
			}
			base = append(base, r.Stall.BaselineGap)
			if m := r.Migration; m != nil {
				for _, p := range m.Paths {
					if p.Err == "" {
						valid = append(valid, p.Validated)
					}
				}
			}
			if r.ClientNoticed != nil {
				cn = append(cn, *r.ClientNoticed)
			}
			if r.ServerNoticed != nil {
				sn = append(sn, *r.ServerNoticed)
			}
			if r.ServerMoved != nil {
				moved = append(moved, *r.ServerMoved)
			}
			if len(r.ClientErrors) > 0 {
				fails[firstLine(r.ClientErrors[0])]++
			} else if r.Timeouts > 0 {
				fails["interactive timeout"]++
			}
		}
		row.Stall, row.StallRTT, row.Recovery, row.Baseline = spreadOf(stall), spreadOf(srtt), spreadOf(recov), spreadOf(base)
		row.Validated, row.ServerMoved = spreadOf(valid), spreadOf(moved)
		row.ClientNoticed, row.ServerNoticed = spreadOf(cn), spreadOf(sn)
		for f, n := range fails {
			row.Failures = append(row.Failures, fmt.Sprintf("%d× %s", n, f))
		}
		sort.Strings(row.Failures)
		rows = append(rows, row)
	}
	return rows
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// writeTable writes rows as a markdown table, figures in ms as median
// [min–max] over repeats.
func writeTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| order | loss | arm | survived | stall ms | open stalls | stall-ending RTT ms | recovery p50 ms | "+
		"baseline gap ms | QUIC path validated ms | server moved ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		surv := fmt.Sprintf("%d/%d", r.Survived, r.Repeats-r.Failed)
		if r.Failed > 0 {
			surv += fmt.Sprintf(" (+%d unmeasured)", r.Failed)
		}
		stall := r.Stall.String()
		if r.OpenStalls > 0 {
			stall = "≥ " + stall
		}
		fmt.Fprintf(w, "| %s | %g%% | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n",
			r.Order, r.LossPct, r.Arm, surv, stall, r.OpenStalls, r.StallRTT, r.Recovery, r.Baseline, r.Validated, r.ServerMoved)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "When each application first saw a problem, ms after the change (n: repeats where it did; – never, within the run and the linger):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| order | loss | arm | client noticed ms (n) | server noticed ms (n) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %g%% | %s | %s (%d) | %s (%d) |\n", r.Order, r.LossPct, r.Arm, r.ClientNoticed, r.ClientNoticed.N, r.ServerNoticed, r.ServerNoticed.N)
	}
	var notes []string
	for _, r := range rows {
		if len(r.Failures) > 0 {
			notes = append(notes, fmt.Sprintf("- %s, %g%% loss, %s: %s", r.Order, r.LossPct, r.Arm, strings.Join(r.Failures, "; ")))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "First client error per run:")
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}
