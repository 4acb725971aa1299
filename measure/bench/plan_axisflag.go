package bench

import (
	"flag"
	"fmt"
)

// An AxisFlag is a flag that gives a matrix an axis: a command lists it in
// Defaults.Axes with its default values, NewFlags registers it, and
// Flags.Matrix hands its value to Set.
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
	Set func(m *Matrix, text string) error
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

// NewAxisFlag is the flag of one of the matrix's own axes (NewAxis): its
// values, space-separated, each once, become the axis called name, whose
// set changes what a value changes in a run.
func NewAxisFlag(name, env, def, help string, set func(rc *RunConfig, value string)) AxisFlag {
	return AxisFlag{Name: name, Env: env, Default: def, Help: help, Set: func(m *Matrix, text string) error {
		values, err := uniqueFields(text, name)
		if err != nil {
			return err
		}
		if len(values) == 0 {
			return fmt.Errorf("-%s is empty: give at least one value", name)
		}
		m.Axes = append(m.Axes, NewAxis(name, values, set))
		return nil
	}}
}
