package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ExitUsage is the exit status of a refused command line.
const ExitUsage = 2

// Parse parses args into fs, which prints nothing when they are wrong:
// the error says what was, for Exit to print. -h and -help print fs's
// usage to its output and return flag.ErrHelp. Positional arguments are
// refused. fs is made to return its errors (flag.ContinueOnError)
// whatever it was created with.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := ParseWithArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (every option is a flag)", fs.Args())
	}
	return nil
}

// ParseWithArgs is Parse for a command that takes positional arguments
// after its flags (fs.Args).
func ParseWithArgs(fs *flag.FlagSet, args []string) error {
	fs.Init(fs.Name(), flag.ContinueOnError)
	out, usage := fs.Output(), fs.Usage
	// While parsing, the flag set prints neither its error nor its usage
	// (a Usage of the command's own may print elsewhere than Output).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		if usage == nil {
			fmt.Fprintf(out, "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		} else {
			usage()
		}
	}
	return err
}

// Exit prints err as one line, "name: err; see -h", to w and returns the
// exit status for it: 0 for flag.ErrHelp (the usage is already printed),
// else ExitUsage. A joined or multi-line error's parts are separated by
// "; ".
func Exit(w io.Writer, name string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(w, "%s: %s; see -h\n", name, Line(err))
	return ExitUsage
}

// Line is err's text on one line: its non-empty lines joined by "; ".
func Line(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// Given reports whether the flag name was given on fs's command line.
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}
