package plan

import (
	"fmt"
	"strconv"
)

// The sessions axis: each count of sessions in Matrix.Sessions is a cell of
// its own, that many sessions of the workload at once over the one link
// (results.Cell.Sessions, "_s4" in the cell's directory). This file is the
// axis: its values' check and what a value sets on a run (its flag is
// benchcmd.SessionsFlag).

// MaxSessions bounds Matrix.Sessions: 64 sessions of five channels is 320
// connections on the tcp and quic-per-channel arms.
const MaxSessions = 64

// sessionsErrors says what is wrong with Matrix.Sessions.
func (m *Matrix) sessionsErrors() []error {
	var errs []error
	for _, n := range m.Sessions {
		if n < 1 || n > MaxSessions {
			errs = append(errs, fmt.Errorf("sessions %d is outside 1..%d", n, MaxSessions))
		}
	}
	return errs
}

// sessionsAxis runs that many sessions at once over the link, or nothing
// when Matrix.Sessions is empty.
func (m *Matrix) sessionsAxis() []Axis {
	if len(m.Sessions) == 0 {
		return nil
	}
	texts := make([]string, len(m.Sessions))
	for i, n := range m.Sessions {
		texts[i] = strconv.Itoa(n)
	}
	return []Axis{newAxis(axisSessions, "session counts", texts, func(rc *Run, i int) {
		rc.Sessions, rc.Cell.Sessions = m.Sessions[i], m.Sessions[i]
	})}
}
