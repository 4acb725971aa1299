package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestParseAndExit: a wrong flag, a bad value and a stray argument each
// give one line and status 2, with nothing printed by the flag set
// itself; -h prints the usage and gives 0; ParseWithArgs keeps the
// arguments.
func TestParseAndExit(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"-nope"}, 2, "cmd: flag provided but not defined: -nope; see -h\n"},
		{[]string{"-n", "x"}, 2, `cmd: invalid value "x" for flag -n: parse error; see -h` + "\n"},
		{[]string{"stray"}, 2, `cmd: unexpected arguments ["stray"] (every option is a flag); see -h` + "\n"},
		{[]string{"-h"}, 0, ""},
	} {
		var usage, out bytes.Buffer
		fs := flag.NewFlagSet("cmd", flag.ExitOnError) // Parse must not exit
		fs.SetOutput(&usage)
		fs.Int("n", 1, "a number")
		err := Parse(fs, c.args)
		code := Exit(&out, "cmd", err)
		if code != c.code || out.String() != c.line {
			t.Errorf("%q: status %d, printed %q; want %d, %q", c.args, code, out.String(), c.code, c.line)
		}
		if (c.code == 0) != strings.Contains(usage.String(), "a number") || c.code != 0 && usage.Len() > 0 {
			t.Errorf("%q: the flag set printed %q; want the usage for -h and nothing else", c.args, usage.String())
		}
	}
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	if err := ParseWithArgs(fs, []string{"--", "a", "b"}); err != nil || strings.Join(fs.Args(), " ") != "a b" {
		t.Errorf("ParseWithArgs: %v, args %q", err, fs.Args())
	}
	// A usage of the command's own, printing elsewhere, prints once, and
	// only for -h.
	var own bytes.Buffer
	for _, args := range [][]string{{"-h"}, {"-nope"}} {
		fs = flag.NewFlagSet("cmd", flag.ContinueOnError)
		fs.Usage = func() { own.WriteString("usage: cmd\n") }
		_ = Parse(fs, args)
	}
	if own.String() != "usage: cmd\n" {
		t.Errorf("the command's own usage printed %q for -h then -nope; want it once", own.String())
	}
}

// TestLine: a joined error is one line.
func TestLine(t *testing.T) {
	err := errors.Join(errors.New("-a: bad"), errors.New("-b: worse\n"))
	if got := Line(err); got != "-a: bad; -b: worse" {
		t.Errorf("Line: %q", got)
	}
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.Bool("v", false, "")
	_ = fs.Parse([]string{"-v"})
	if !Given(fs, "v") || Given(fs, "w") {
		t.Error("Given: -v given, -w not")
	}
}

func Example() {
	fs := flag.NewFlagSet("mycmd", flag.ContinueOnError)
	n := fs.Int("n", 1, "how many")
	if err := Parse(fs, []string{"-n", "0"}); err != nil {
		os.Exit(Exit(os.Stderr, "mycmd", err))
	}
	if *n < 1 {
		code := Exit(os.Stdout, "mycmd", fmt.Errorf("-n %d: give at least 1", *n))
		fmt.Println("status", code)
	}
	// Output:
	// mycmd: -n 0: give at least 1; see -h
	// status 2
}

// word is a boolean flag's value that also takes "x" or "y" as the next
// argument.
type word string

func (w *word) String() string { return string(*w) }
func (w *word) Set(s string) error {
	*w = word(s)
	return nil
}
func (w *word) IsBoolFlag() bool        { return true }
func (w *word) TakesWord(s string) bool { return s == "x" || s == "y" }

// TestTakesWord: a flag whose value takes a word takes it as the next
// argument, alone it is true, and other arguments are left as they were
// (a string flag's value that looks like the word, a positional one, and
// everything after "--" or the first positional one).
func TestTakesWord(t *testing.T) {
	for _, c := range []struct {
		args []string
		w, s string
		b    bool
		rest string
	}{
		{[]string{"-w", "x", "-b"}, "x", "", true, ""},
		{[]string{"--w", "y"}, "y", "", false, ""},
		{[]string{"-w"}, "true", "", false, ""},
		{[]string{"-w=false", "-s", "x"}, "false", "x", false, ""},
		{[]string{"-s", "-w", "x"}, "", "-w", false, "x"},
		{[]string{"-w", "z"}, "true", "", false, "z"},
		{[]string{"-b", "x"}, "", "", true, "x"},
		{[]string{"--", "-w", "x"}, "", "", false, "-w x"},
		{[]string{"p", "-w", "x"}, "", "", false, "p -w x"},
	} {
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		var w word
		fs.Var(&w, "w", "")
		s := fs.String("s", "", "")
		b := fs.Bool("b", false, "")
		if err := ParseWithArgs(fs, c.args); err != nil || string(w) != c.w || *s != c.s || *b != c.b || strings.Join(fs.Args(), " ") != c.rest {
			t.Errorf("%q: w %q s %q b %v args %q (%v); want %q %q %v %q", c.args, w, *s, *b, fs.Args(), err, c.w, c.s, c.b, c.rest)
		}
	}
}
