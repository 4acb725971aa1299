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
// after its flags (fs.Args). A boolean flag whose value has a method
// TakesWord(string) bool also takes the next argument as its value when
// TakesWord accepts it ("-keep-awake off" as "-keep-awake=off").
func ParseWithArgs(fs *flag.FlagSet, args []string) error {
	args = joinWords(fs, args)
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

// joinWords returns args with each "-name word", where -name is a flag
// whose value takes word, as "-name=word"; args are read as fs.Parse
// reads them, up to the first that is not a flag.
func joinWords(fs *flag.FlagSet, args []string) []string {
	type worded interface{ TakesWord(string) bool }
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(out, args[i+1:]...)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		fl := fs.Lookup(name)
		if fl == nil || i+1 == len(args) {
			continue
		}
		if w, ok := fl.Value.(worded); ok && w.TakesWord(args[i+1]) {
			out[len(out)-1] = a + "=" + args[i+1]
			i++
			continue
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			i++ // the flag's value, whatever it looks like
			out = append(out, args[i])
		}
	}
	return out
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
