package bench

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The sessions axis: each count of sessions in Matrix.Sessions is a cell of
// its own, that many sessions of the workload at once over the one link
// (results.Cell.Sessions, "_s4" in the cell's directory). This file is all
// of the axis: its flag, its values' check and what a value sets on a run.

// MaxSessions bounds Matrix.Sessions: 64 sessions of five channels is 320
// connections on the tcp and quic-per-channel arms.
const MaxSessions = 64

// SessionsFlag is -sessions (env SESSIONS) with the default counts def:
// the session counts of Matrix.Sessions, one cell each.
func SessionsFlag(def string) AxisFlag {
	return AxisFlag{Name: "sessions", Env: "SESSIONS", Default: def,
		Help: "numbers of sessions sharing the link, one cell each, space-separated",
		Set: func(m *Matrix, text string) (err error) {
			m.Sessions, err = parseSessions(text)
			return err
		}}
}

// parseSessions parses -sessions: at least one whole number, each once.
func parseSessions(text string) ([]int, error) {
	var sessions []int
	for _, s := range strings.Fields(text) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("sessions %q is not a whole number (want counts such as \"1 2 4 8\")", s)
		}
		if slices.Contains(sessions, n) {
			return nil, fmt.Errorf("sessions %q is given twice: give each count once", s)
		}
		sessions = append(sessions, n)
	}
	if len(sessions) == 0 {
		return nil, errors.New("no session counts: give at least one, e.g. -sessions \"1 2 4 8\"")
	}
	return sessions, nil
}

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
	return []Axis{newAxis(AxisSessions, "session counts", texts, func(rc *RunConfig, i int) {
		rc.Sessions, rc.Cell.Sessions = m.Sessions[i], m.Sessions[i]
	})}
}
