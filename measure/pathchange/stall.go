package pathchange

import (
	"slices"
	"sort"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
)

// Windows the stall is measured in, relative to the change.
const (
	// stallWindow: the stall is the largest gap between consecutive echo
	// completions that ends after the change and starts within this long
	// after it.
	stallWindow = 5 * time.Second
	// baselineWindow: the same statistic over this long before the change,
	// for comparison (what an undisturbed run shows).
	baselineWindow = 5 * time.Second
	// recoveryWindow: round trips sent this long after the stall ended are
	// summarised as the recovery.
	recoveryWindow = 2 * time.Second
)

// Stall is the interruption of the interactive channel around the change.
type Stall struct {
	// Gap is the largest time between consecutive echo completions that
	// ends after the change and starts less than 5 s after it: how long
	// the user saw no response. From and To bound it (relative to the
	// change).
	Gap  time.Duration `json:"gap_ns"`
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
	// Open is set when no round trip sent after the old address went
	// completed before the run ended: Gap then runs from the last
	// completion to the end of the run and is a lower bound. An echo sent
	// before the address went does not close it, even if it was read
	// after: it may have arrived before and waited for a busy reader.
	Open bool `json:"open"`
	// RTT is the round trip of the echo that ended the gap (the request
	// that was outstanding through it); zero when Open.
	RTT time.Duration `json:"rtt_ns"`
	// RecoveryP50 and RecoveryMax summarise round trips sent in the 2 s
	// after the gap ended, RecoveryN how many there were.
	RecoveryP50 time.Duration `json:"recovery_p50_ns"`
	RecoveryMax time.Duration `json:"recovery_max_ns"`
	RecoveryN   int           `json:"recovery_n"`
	// BaselineGap and BaselineP50 are the largest completion gap and the
	// median round trip in the 5 s before the change.
	BaselineGap time.Duration `json:"baseline_gap_ns"`
	BaselineP50 time.Duration `json:"baseline_p50_ns"`
}

// stallOf measures the completion gaps around change (offsets from the
// workload start; disrupt is when the old address went, end when the
// workload ended). Samples are only the round trips that completed.
func stallOf(samples []spicelike.Sample, change, disrupt, end time.Duration) Stall {
	var st Stall
	done := make([]time.Duration, len(samples))
	for i, s := range samples {
		done[i] = s.Offset + s.RTT
	}
	// Samples are in send order, and with one request outstanding at a
	// time completions are too; sort anyway so the gaps are right even if
	// not.
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return done[idx[a]] < done[idx[b]] })

	var last = -1 // the last completion at or before the change
	for k, i := range idx {
		if done[i] <= change {
			last = k
		}
	}
	best := time.Duration(-1)
	for k := max(last, 0); k+1 < len(idx); k++ {
		a, b := done[idx[k]], done[idx[k+1]]
		if b <= change || a >= change+stallWindow {
			continue
		}
		if g := b - a; g > best {
			best = g
			st.Gap, st.From, st.To = g, a-change, b-change
			st.RTT = samples[idx[k+1]].RTT
		}
	}
	// Only a request written after disrupt proves the path carried an
	// echo once the address was gone: a completion is the application's
	// read, which can come well after the echo arrived.
	sentAfter := slices.ContainsFunc(samples, func(s spicelike.Sample) bool { return s.Offset >= disrupt })
	if !sentAfter {
		from := time.Duration(0)
		if len(idx) > 0 {
			from = done[idx[len(idx)-1]]
		}
		st.Gap, st.From, st.To, st.Open, st.RTT = end-from, from-change, end-change, true, 0
	}
	var rec []time.Duration
	for _, s := range samples {
		if s.Offset >= change+st.To && s.Offset < change+st.To+recoveryWindow {
			rec = append(rec, s.RTT)
		}
	}
	if !st.Open && len(rec) > 0 {
		slices.Sort(rec)
		st.RecoveryN = len(rec)
		st.RecoveryP50 = median(rec)
		st.RecoveryMax = rec[len(rec)-1]
	}
	var base []time.Duration
	var prev time.Duration = -1
	for _, i := range idx {
		d := done[i]
		if d < change-baselineWindow || d > change {
			continue
		}
		if prev >= 0 && d-prev > st.BaselineGap {
			st.BaselineGap = d - prev
		}
		prev = d
		base = append(base, samples[i].RTT)
	}
	if len(base) > 0 {
		slices.Sort(base)
		st.BaselineP50 = median(base)
	}
	return st
}

// median of sorted values: the mean of the middle two for an even count.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
