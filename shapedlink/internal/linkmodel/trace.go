package linkmodel

import (
	"slices"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// oppTime is the time of the trace's k-th delivery opportunity, counting
// from 0 across repeats of the period.
func (m *Model) oppTime(k int64) int64 {
	n := int64(len(m.trace))
	return k/n*m.tracePeriod + m.trace[k%n]
}

// firstOppAfter is the index of the first opportunity after t: mm-link
// burns every opportunity up to a frame's arrival before it queues it.
func (m *Model) firstOppAfter(t int64) int64 {
	n := int64(len(m.trace))
	c := max(t, 0) / m.tracePeriod
	r := t - c*m.tracePeriod
	i, _ := slices.BinarySearchFunc(m.trace, r, func(v, r int64) int {
		if v <= r {
			return -1
		}
		return 1
	})
	return c*n + int64(i) // i == n is the next period's first
}

// traceDepart is when a frame of size bytes that the link may start on at
// t leaves under the trace: it takes what is left of the opportunities in
// turn from the first one after t (or from where the frame before it
// finished, if that is later), 1500 bytes each, and leaves at the one
// that carries its last byte; what it leaves of that one goes to the
// next frame, as in mm-link. waited says it leaves later than the first
// opportunity after t (it queued).
func (m *Model) traceDepart(t int64, size int) (depart int64, waited bool) {
	if m.oppTime(m.traceK) <= t {
		// The link went idle: the opportunities until now are lost.
		m.traceK, m.traceLeft = m.firstOppAfter(t), linkspec.TraceOpportunity
	}
	// It waited if the frames ahead hold the opportunities between t and
	// the one it starts on, or if it needs more than that one.
	k0 := m.traceK
	waited = k0 > 0 && m.oppTime(k0-1) > t
	for size > m.traceLeft {
		size -= m.traceLeft
		m.traceK++
		m.traceLeft = linkspec.TraceOpportunity
	}
	m.traceLeft -= size
	return m.oppTime(m.traceK), waited || m.traceK > k0
}
