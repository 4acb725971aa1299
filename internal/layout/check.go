package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// violation is one finding in the known list's text form: a key and,
// for findings that have a size, the size.
type violation struct {
	Key  string // e.g. "unused measure/bench Rig.Close"
	Size int    // files, lines or imports; 0 when the finding has no size
}

func (v violation) String() string {
	if v.Size > 0 {
		return v.Key + " " + strconv.Itoa(v.Size)
	}
	return v.Key
}

// violations lists the report's findings that break the project's rules:
//
//	files PKG N             a package under measure/ with N > 15 non-test files
//	unused PKG NAME         an exported name nothing outside PKG uses
//	comment FILE@ANCHOR N   a comment block of N >= 15 lines outside doc.go
//	long FILE@FUNC N        a function of N > 100 lines
//	imports-up DIR N        N imports between DIR's rooms run back up
func violations(r *Report) []violation {
	var out []violation
	for _, p := range r.Packages {
		if p.TooLarge {
			out = append(out, violation{"files " + p.Path, p.Files})
		}
	}
	for _, u := range r.Unused {
		out = append(out, violation{"unused " + u.Package + " " + u.Name, 0})
	}
	for _, c := range r.Comments {
		out = append(out, violation{"comment " + c.File + "@" + c.Anchor, c.Lines})
	}
	for _, f := range r.Funcs {
		out = append(out, violation{"long " + f.File + "@" + f.Name, f.Lines})
	}
	for _, l := range r.Levels {
		if len(l.BackUp) > 0 {
			out = append(out, violation{"imports-up " + l.Dir, len(l.BackUp)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// sized are the kinds of finding whose last field is a size.
var sized = map[string]bool{"files": true, "comment": true, "long": true, "imports-up": true}

// readKnown reads a known list: one violation a line, as violations
// writes them; blank lines and lines starting with # are skipped.
func readKnown(rd io.Reader) (map[string]int, error) {
	known := map[string]int{}
	sc := bufio.NewScanner(rd)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if _, ok := sized[f[0]]; ok {
			if len(f) != 3 {
				return nil, fmt.Errorf("line %d: %q: want %s KEY SIZE", n, line, f[0])
			}
			size, err := strconv.Atoi(f[2])
			if err != nil || size <= 0 {
				return nil, fmt.Errorf("line %d: %q: the size %q is not a positive number", n, line, f[2])
			}
			known[f[0]+" "+f[1]] = size
			continue
		}
		if f[0] != "unused" || len(f) != 3 {
			return nil, fmt.Errorf("line %d: %q: not a violation (want files, unused, comment, long or imports-up and its fields)", n, line)
		}
		known[line] = 0
	}
	return known, sc.Err()
}

// ratchet compares the findings with the known list: a finding not in
// it, or larger than it says, is new; a known one no longer found is
// gone.
func ratchet(found []violation, known map[string]int) (fresh []string, gone []string) {
	seen := map[string]bool{}
	for _, v := range found {
		seen[v.Key] = true
		k, ok := known[v.Key]
		switch {
		case !ok:
			fresh = append(fresh, v.String())
		case v.Size > k:
			fresh = append(fresh, fmt.Sprintf("%s (known at %d)", v, k))
		}
	}
	for k := range known {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	return fresh, gone
}
