package linkspec

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCrossFlows is the most cross flows one direction may carry.
const maxCrossFlows = 16

// CrossQUIC is the kind of a cross flow carried by QUIC; every other
// kind names a kernel TCP congestion control.
const CrossQUIC = "quic"

// Cross is one group of bulk flows beside the session in a direction
// (the cross option): Count flows of Kind, "quic" or the name of a
// kernel TCP congestion control ("cubic", "reno", "bbr", ...).
type Cross struct {
	Count int
	Kind  string
}

// TCP reports whether the flows are kernel TCP (Kind is then their
// congestion control).
func (c Cross) TCP() bool { return c.Kind != CrossQUIC }

func (c Cross) String() string { return strconv.Itoa(c.Count) + "x" + c.Kind }

// CrossFlows is the number of flows crosses make.
func CrossFlows(crosses []Cross) int {
	n := 0
	for _, c := range crosses {
		n += c.Count
	}
	return n
}

// parseCross reads NxKIND[+NxKIND...]: "2xcubic", "1xreno+1xquic".
func parseCross(val string, d *Direction) error {
	d.Cross = nil
	seen := map[string]bool{}
	for _, part := range strings.Split(val, "+") {
		n, kind, ok := strings.Cut(part, "x")
		if !ok || n == "" || kind == "" {
			return fmt.Errorf("part %q is not NxKIND (e.g. 2xcubic or 1xquic); KIND is quic or a kernel TCP congestion control", part)
		}
		count, err := parseCount(n, 1, maxCrossFlows)
		if err != nil {
			return fmt.Errorf("part %q: count %v", part, err)
		}
		if !validCCName(kind) {
			return fmt.Errorf("part %q names kind %q; a kind is quic or a kernel TCP congestion control (lower-case letters, digits and _, at most 15)", part, kind)
		}
		if seen[kind] {
			return fmt.Errorf("names %s twice; give its flows once, as NxKIND", kind)
		}
		seen[kind] = true
		d.Cross = append(d.Cross, Cross{Count: count, Kind: kind})
	}
	if n := CrossFlows(d.Cross); n > maxCrossFlows {
		return fmt.Errorf("asks for %d flows; a direction carries at most %d", n, maxCrossFlows)
	}
	return nil
}

// validCCName reports whether s can name a kernel congestion control
// (TCP_CA_NAME_MAX is 16 with the NUL).
func validCCName(s string) bool {
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func formatCross(crosses []Cross) string {
	parts := make([]string, len(crosses))
	for i, c := range crosses {
		parts[i] = c.String()
	}
	return strings.Join(parts, "+")
}
