package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shakenfist/quicbench/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("layout", flag.ContinueOnError)
	fs.SetOutput(stdout)
	dir := fs.String("C", ".", "the module's root `directory`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	files := fs.String("files", "", "print only the file floors of `package` (e.g. ./shapedlink) and the arrows running back up")
	check := fs.String("check", "", "compare the violations with the known list in `file` and fail naming every new one")
	known := fs.Bool("known", false, "print the violations in the known list's form (to write internal/layout/known.txt)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit(stderr, "layout", err)
	}
	modes := 0
	for _, on := range []bool{*files != "", *check != "", *known} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return cli.Exit(stderr, "layout", fmt.Errorf("give one of -files, -check and -known"))
	}
	var knownList map[string]int
	if *check != "" {
		f, err := os.Open(*check)
		if err != nil {
			return cli.Exit(stderr, "layout", fmt.Errorf("-check: %v", err))
		}
		knownList, err = readKnown(f)
		f.Close()
		if err != nil {
			return cli.Exit(stderr, "layout", fmt.Errorf("-check %s: %v", *check, err))
		}
	}

	start := time.Now()
	m, r, err := analyse(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "layout: %v\n", err)
		return 1
	}
	took := time.Since(start)

	switch {
	case *files != "":
		p, err := m.find(*files)
		if err != nil {
			return cli.Exit(stderr, "layout", fmt.Errorf("-files: %v", err))
		}
		var fl FileLayers
		for _, f := range r.Files {
			if f.Package == p.Rel {
				fl = f
			}
		}
		if *asJSON {
			return writeJSON(stdout, stderr, fl)
		}
		printFiles(stdout, fl)
	case *check != "":
		fresh, gone := ratchet(violations(r), knownList)
		for _, g := range gone {
			fmt.Fprintf(stdout, "gone (remove it from %s): %s\n", *check, g)
		}
		for _, f := range fresh {
			fmt.Fprintf(stdout, "NEW: %s\n", f)
		}
		if len(fresh) > 0 {
			fmt.Fprintf(stderr, "layout: %d new violations not in %s\n", len(fresh), *check)
			return 1
		}
		fmt.Fprintf(stdout, "no new violations (%d known)\n", len(knownList)-len(gone))
	case *known:
		fmt.Fprintf(stdout, "# Known violations of the project's layout rules; see go doc ./internal/layout.\n")
		fmt.Fprintf(stdout, "# Written by go run ./internal/layout -known; remove lines as they are fixed, never add.\n")
		for _, v := range violations(r) {
			fmt.Fprintln(stdout, v)
		}
	case *asJSON:
		return writeJSON(stdout, stderr, r)
	default:
		printReport(stdout, r)
		fmt.Fprintf(stdout, "\nanalysed in %.1fs\n", took.Seconds())
	}
	return 0
}

const usage = `Usage: go run ./internal/layout [flags]

Run from the module's root, it prints the figures the project's layout
rules are judged by: each package's non-test files, lines, import floor,
exported names and those no other package uses; comment blocks of 15
lines or more outside doc.go files; functions of more than 100 lines;
the rooms of each directory on floors; and each package's files on
floors with the arrows running back up. See go doc ./internal/layout.

`

func writeJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "layout: %v\n", err)
		return 1
	}
	return 0
}

func printReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "module %s: %d packages\n\n", r.Module, len(r.Packages))
	fmt.Fprintln(w, "Packages: non-test .go files (every system's) and lines; import floor;")
	fmt.Fprintln(w, "exported names and those no other package uses; file arrows and those back up.")
	fmt.Fprintf(w, "! marks a package under measure/ with more than %d files.\n", maxMeasureFiles)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tfiles\tlines\tfloor\texported\tunused\tarrows\tback up\t")
	for _, p := range r.Packages {
		mark := ""
		if p.TooLarge {
			mark = "!"
		}
		fmt.Fprintf(tw, "%s\t%s%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Path, mark, p.Files, p.Lines, p.Floor, p.Exported, p.Unused, p.Arrows, p.BackUp)
	}
	tw.Flush()

	onlyTests := 0
	for _, u := range r.Unused {
		if strings.HasPrefix(u.Note, "used only by other") {
			onlyTests++
		}
	}
	fmt.Fprintf(w, "\nExported names no other package's non-test code uses: %d (%d of them used by other packages' tests)\n", len(r.Unused), onlyTests)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, u := range r.Unused {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", u.Package, u.Name, u.Pos, u.Note)
	}
	tw.Flush()

	tests := 0
	for _, c := range r.Comments {
		if strings.HasSuffix(c.File, "_test.go") {
			tests++
		}
	}
	fmt.Fprintf(w, "\nComment blocks of %d lines or more outside doc.go: %d (%d of them in tests)\n", longComment, len(r.Comments), tests)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Comments {
		fmt.Fprintf(tw, "  %s:%d\t%d lines\t%s\n", c.File, c.Line, c.Lines, c.Anchor)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nFunctions of more than %d lines: %d\n", longFunc, len(r.Funcs))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range r.Funcs {
		fmt.Fprintf(tw, "  %s:%d\t%d lines\t%s\n", f.File, f.Line, f.Lines, f.Name)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nRooms (a room stands above the rooms it imports):")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "  %s: %d rooms on %d floors, %d imports between them, %d back up\n", l.Dir, len(l.Rooms), l.Floors, l.Imports, len(l.BackUp))
		for f := l.Floors; f >= 1; f-- {
			var names []string
			for _, rm := range l.Rooms {
				if rm.Floor == f {
					names = append(names, rm.Name)
				}
			}
			fmt.Fprintf(w, "    floor %d: %s\n", f, strings.Join(names, " "))
		}
		for _, b := range l.BackUp {
			fmt.Fprintf(w, "    back up: %s -> %s\n", b.From, b.To)
		}
	}
}

func printFiles(w io.Writer, fl FileLayers) {
	fmt.Fprintf(w, "%s: %d files (this system's build) on %d floors, %d arrows, %d back up\n", fl.Package, len(fl.Files), fl.Floors, fl.Arrows, len(fl.BackUp))
	for f := fl.Floors; f >= 1; f-- {
		var names []string
		for _, x := range fl.Files {
			if x.Floor == f {
				names = append(names, x.Name[strings.LastIndex(x.Name, "/")+1:])
			}
		}
		fmt.Fprintf(w, "  floor %d: %s\n", f, strings.Join(names, " "))
	}
	for _, a := range fl.BackUp {
		fmt.Fprintf(w, "  back up: %s -> %s (%s)\n", a.From, a.To, strings.Join(a.Names, ", "))
	}
}
