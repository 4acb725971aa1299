package benchcmd

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/measure/plan"
)

// An AxisFlag is a flag that gives a matrix an axis: a command lists it in
// Defaults.Axes with its default values, and Main registers it and hands
// its value to Set.
type AxisFlag struct {
	// Name is the flag's name ("caps"); Env, when not empty, the
	// environment variable whose value replaces Default ("CAPS").
	Name, Env string
	// Default is the values the command runs when neither is given,
	// space-separated.
	Default string
	// Help says what the values are; the flag's help adds the variable.
	Help string
	// Set reads text, the flag's value, into m (an axis's values, or a
	// field such as Matrix.Sessions), with an error that names the flag
	// when text is wrong. Matrix.Validate checks the result after it.
	Set func(m *plan.Matrix, text string) error
}

// register puts the flag on fs, its text in *text.
func (a AxisFlag) register(fs *flag.FlagSet, text *string) {
	def, help := a.Default, a.Help
	if a.Env != "" {
		def = env(a.Env, def)
		help += " (env " + a.Env + ")"
	}
	fs.StringVar(text, a.Name, def, help)
}

// SessionsFlag is -sessions (env SESSIONS) with the default counts def:
// the session counts of Matrix.Sessions, one cell each.
func SessionsFlag(def string) AxisFlag {
	return AxisFlag{Name: "sessions", Env: "SESSIONS", Default: def,
		Help: "numbers of sessions sharing the link, one cell each, space-separated",
		Set: func(m *plan.Matrix, text string) (err error) {
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

// CapsFlag is -caps (env CAPS) with the default fractions def: the display
// caps of Matrix.BulkCapFractions, one cell each.
func CapsFlag(def string) AxisFlag {
	return AxisFlag{Name: "caps", Env: "CAPS", Default: def,
		Help: "display caps as fractions of the link rate (payload bit/s), one cell each, space-separated; 0 is uncapped",
		Set: func(m *plan.Matrix, text string) (err error) {
			m.BulkCapFractions, err = parseCaps(text)
			return err
		}}
}

// parseCaps parses -caps: at least one fraction, each once.
func parseCaps(text string) ([]float64, error) {
	caps, err := parseFloats(text, "cap", "0 0.5 0.8")
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 {
		return nil, errors.New("no caps: give at least one, e.g. -caps \"0.5 0.8\"")
	}
	return caps, nil
}
