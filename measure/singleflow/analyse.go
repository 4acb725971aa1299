package singleflow

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// tcpBackoffs reads loss episodes from a sender's TCP_INFO series: an
// episode starts at a sample whose CA state is CWR, Recovery or Loss after
// one that was Open or Disorder, and ends at the next Open or Disorder
// sample. Each gives the window at its end over the window just before it.
func tcpBackoffs(s []transport.TCPInfo) []float64 {
	var out []float64
	var before uint32
	in := false
	for i, x := range s {
		reducing := x.CAState >= 2 // TCP_CA_CWR, TCP_CA_Recovery, TCP_CA_Loss
		switch {
		case !in && reducing && i > 0:
			before, in = s[i-1].CwndSegments, true
		case in && !reducing:
			if before > 0 {
				out = append(out, float64(x.CwndSegments)/float64(before))
			}
			in = false
		}
	}
	return out
}

// quicBackoffs reads loss episodes from quic-go's qlog: each entry into
// recovery gives the first window logged at or after it over the last
// logged before it. quic-go cuts its window once, on entering recovery,
// and does not grow it until recovery ends.
func quicBackoffs(m []transport.QUICMetric, states []transport.QUICCongestionState) []float64 {
	var out []float64
	for i, st := range states {
		if st.State != "recovery" || (i > 0 && states[i-1].State == "recovery") {
			continue
		}
		j := sort.Search(len(m), func(k int) bool { return m[k].At >= st.At })
		if j == 0 || j == len(m) || m[j-1].CongestionWindow <= 0 {
			continue
		}
		if i+1 < len(states) && m[j].At > states[i+1].At {
			continue // no window logged inside this episode
		}
		out = append(out, float64(m[j].CongestionWindow)/float64(m[j-1].CongestionWindow))
	}
	return out
}

// Cell summarises one flow in one profile and loss level.
type Cell struct {
	Profile string  `json:"profile"`
	Loss    float64 `json:"loss_pct"`
	Flow    string  `json:"flow"`
	Runs    int     `json:"runs"`
	Failed  int     `json:"failed"`
	// Goodput is the median over runs, Min and Max the range, Spread
	// Max - Min; with no measured run they are 0 here and null in JSON.
	Goodput, GoodputMin, GoodputMax, Spread float64
	// Backoff is the median over every loss episode of every run; Episodes
	// how many there were. With no episode Backoff is 0 here and null in
	// JSON.
	Backoff  float64 `json:"backoff"`
	Episodes int     `json:"episodes"`
	// InitialWindow and FirstRTTBytes are medians over runs (0 here and
	// null in JSON with no measured run).
	InitialWindow    float64 `json:"initial_window_packets"`
	FirstRTTBytes    float64 `json:"first_rtt_bytes"`
	FirstRTTCapBytes int64   `json:"first_rtt_cap_bytes"`
	Controller       string  `json:"controller"`
}

// MarshalJSON writes the medians of what was not measured (no run, or
// no loss episode) as null.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	some := func(v float64, ok bool) *float64 {
		if !ok {
			return nil
		}
		return &v
	}
	ran := c.Runs > 0
	return json.Marshal(struct {
		plain
		Goodput       *float64 `json:"Goodput"`
		GoodputMin    *float64 `json:"GoodputMin"`
		GoodputMax    *float64 `json:"GoodputMax"`
		Spread        *float64 `json:"Spread"`
		Backoff       *float64 `json:"backoff"`
		InitialWindow *float64 `json:"initial_window_packets"`
		FirstRTTBytes *float64 `json:"first_rtt_bytes"`
	}{plain(c), some(c.Goodput, ran), some(c.GoodputMin, ran), some(c.GoodputMax, ran), some(c.Spread, ran),
		some(c.Backoff, c.Episodes > 0), some(c.InitialWindow, ran), some(c.FirstRTTBytes, ran)})
}

// Summarise groups results into cells, in the order they first appear.
func Summarise(rs []Result) []Cell {
	type key struct {
		p, f string
		l    float64
	}
	var order []key
	groups := map[key][]Result{}
	for _, r := range rs {
		k := key{r.Profile, r.Flow, r.Loss}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []Cell
	for _, k := range order {
		c := Cell{Profile: k.p, Loss: k.l, Flow: k.f}
		var gp, iw, fb, bo []float64
		for _, r := range groups[k] {
			c.Controller = r.Controller
			c.FirstRTTCapBytes = r.FirstRTTCapBytes
			if r.Error != "" {
				c.Failed++
				continue
			}
			c.Runs++
			gp = append(gp, r.GoodputMbit)
			iw = append(iw, r.InitialWindow)
			fb = append(fb, float64(r.FirstRTTBytes))
			bo = append(bo, r.Backoffs...)
		}
		if len(gp) > 0 {
			c.Goodput, _ = stats.Median(gp)
			c.GoodputMin, c.GoodputMax = slices.Min(gp), slices.Max(gp)
			c.Spread = c.GoodputMax - c.GoodputMin
			c.InitialWindow, _ = stats.Median(iw)
			c.FirstRTTBytes, _ = stats.Median(fb)
		}
		if len(bo) > 0 {
			c.Backoff, _ = stats.Median(bo)
		}
		c.Episodes = len(bo)
		out = append(out, c)
	}
	return out
}

// flowMatch compares flow with ref in one profile and loss level by the
// project's rule: the difference of the median goodputs against the wider
// of the two spreads. Within is true when it does not exceed it.
type flowMatch struct {
	Profile   string  `json:"profile"`
	Loss      float64 `json:"loss_pct"`
	Flow, Ref string
	Delta     float64 `json:"delta_mbit"`
	Threshold float64 `json:"threshold_mbit"`
	Within    bool    `json:"within"`
	// InRange is true when flow's median lies within ref's min..max.
	InRange bool `json:"in_range"`
}

// compareFlows matches flow against ref in every profile and loss level where
// both have measured runs.
func compareFlows(cells []Cell, flow, ref string) []flowMatch {
	var out []flowMatch
	for _, r := range cells {
		if r.Flow != ref || r.Runs == 0 {
			continue
		}
		for _, f := range cells {
			if f.Flow != flow || f.Profile != r.Profile || f.Loss != r.Loss || f.Runs == 0 {
				continue
			}
			m := flowMatch{Profile: r.Profile, Loss: r.Loss, Flow: flow, Ref: ref, Delta: f.Goodput - r.Goodput,
				Threshold: math.Max(f.Spread, r.Spread)}
			m.Within = math.Abs(m.Delta) <= m.Threshold
			m.InRange = f.Goodput >= r.GoodputMin && f.Goodput <= r.GoodputMax
			out = append(out, m)
		}
	}
	return out
}

// Markdown renders cells and the matches of flow against ref as tables.
func Markdown(cells []Cell, flow, ref string) string {
	var b strings.Builder
	b.WriteString("| profile | loss | flow | runs | goodput Mbit/s (min-max) | spread | window after loss / before (episodes) | initial window, packets | first RTT, KB (link cap) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cells {
		runs := fmt.Sprint(c.Runs)
		if c.Failed > 0 {
			runs += fmt.Sprintf(" (%d failed)", c.Failed)
		}
		bo := "-"
		if c.Episodes > 0 {
			bo = fmt.Sprintf("%.2f (%d)", c.Backoff, c.Episodes)
		}
		if c.Runs == 0 {
			fmt.Fprintf(&b, "| %s | %g%% | %s | %s | - | - | %s | - | - (%.1f) |\n", c.Profile, c.Loss, c.Flow, runs, bo, float64(c.FirstRTTCapBytes)/1000)
			continue
		}
		fmt.Fprintf(&b, "| %s | %g%% | %s | %s | %.2f (%.2f-%.2f) | %.2f | %s | %.0f | %.1f (%.1f) |\n",
			c.Profile, c.Loss, c.Flow, runs, c.Goodput, c.GoodputMin, c.GoodputMax, c.Spread, bo, c.InitialWindow,
			c.FirstRTTBytes/1000, float64(c.FirstRTTCapBytes)/1000)
	}
	ms := compareFlows(cells, flow, ref)
	if len(ms) > 0 {
		fmt.Fprintf(&b, "\n%s against %s (goodput, median of runs; threshold = the wider spread):\n\n", flow, ref)
		b.WriteString("| profile | loss | delta Mbit/s | threshold | within spread | inside ref's range |\n|---|---|---|---|---|---|\n")
		for _, m := range ms {
			fmt.Fprintf(&b, "| %s | %g%% | %+.2f | %.2f | %s | %s |\n", m.Profile, m.Loss, m.Delta, m.Threshold, yes(m.Within), yes(m.InRange))
		}
	}
	return b.String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
