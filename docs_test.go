package quicbench_test

// These tests keep README.md and docs/ runnable by a reader: no path that
// only exists on the machine the docs were written on, and every
// `go run ./examples/NAME` command in them names a command that exists and
// flags that command accepts. The flag check builds each named command and
// reads the flags from its own -h output, so a renamed or removed flag fails
// here instead of in a reader's shell.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shakenfist/quicbench/shapedlink"
)

// docFiles lists README.md and every text file under docs/, as paths
// relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if utf8.Valid(b) && !bytes.ContainsRune(b, 0) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// absPathRE finds a slash-rooted path where a path can start: at the start
// of a line or after whitespace, a quote, a backtick, an opening bracket,
// a comma or = (an assignment or flag value), whose first name starts with
// a letter. A URL's "//" follows a colon, a closing HTML tag a "<", a
// prefix length such as /24 has no letter, and ratios such as ms/MB have
// no separator before the slash, so none of them match.
var absPathRE = regexp.MustCompile("(?:^|[\\s\"'`(\\[{=,])(/[A-Za-z_][A-Za-z0-9._~-]*(?:/[A-Za-z0-9._~@%+:-]*)*)")

// systemRoots are the top-level directories every Linux machine has with
// the same meaning, which docs may name (/proc/sys/..., /dev/net/tun).
var systemRoots = map[string]bool{
	"proc": true, "sys": true, "dev": true, "etc": true, "usr": true,
	"bin": true, "sbin": true, "lib": true, "lib64": true, "run": true,
}

var flockRE = regexp.MustCompile(`\bflock\b`)

// machinePaths returns, for one line, the absolute paths in it that are
// not under a system directory.
func machinePaths(line string) []string {
	var out []string
	for _, m := range absPathRE.FindAllStringSubmatch(line, -1) {
		p := strings.TrimRight(m[1], ".,:")
		root, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if !systemRoots[root] {
			out = append(out, p)
		}
	}
	return out
}

func TestDocsHaveNoMachinePaths(t *testing.T) {
	for _, f := range docFiles(t) {
		for i, line := range readLines(t, f) {
			for _, p := range machinePaths(line) {
				t.Errorf("%s:%d: absolute path %q: name paths relative to the repository root (only system paths such as /proc or /usr may be absolute)", f, i+1, p)
			}
			if flockRE.MatchString(line) {
				t.Errorf("%s:%d: mentions flock: a reader's command takes no lock", f, i+1)
			}
		}
	}
}

func TestMachinePaths(t *testing.T) {
	for line, want := range map[string]string{
		"go build -o /tmp/qb/headline ./examples/headline": "/tmp/qb/headline",
		`"workdir": "/work/main/results/x",`:               "/work/main/results/x",
		"see (`/home/x`)":                                  "/home/x",
		"-workdir=/srv/data":                               "/srv/data",
		"/root/go/bin/staticcheck":                         "/root/go/bin/staticcheck",
		"sysctl /proc/sys/net/core/rmem_max":               "",
		"open /dev/net/tun and /usr/bin/env":               "",
		"https://github.com/shakenfist/quicbench/x":        "",
		"1.28 / 26.3 ms/MB at 0.5/0.8":                     "",
		"results/headline-80-10/summary.md":                "",
		"the same /24, and </details>":                     "",
	} {
		got := strings.Join(machinePaths(line), " ")
		if got != want {
			t.Errorf("machinePaths(%q) = %q, want %q", line, got, want)
		}
	}
}

// docCommand is one `go run ./examples/NAME ...` found in a doc.
type docCommand struct {
	where string   // file:line of "go run"
	name  string   // NAME in ./examples/NAME
	env   []string // names of VAR=value assignments before "go run"
	args  []string // the words after ./examples/NAME, unquoted
}

var goRunRE = regexp.MustCompile(`go run\s+(?:-\S+\s+)*\./examples/([A-Za-z0-9_-]+)/?`)

var envAssignRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)

// docCommands finds every `go run ./examples/NAME` in text (a file's
// contents; file names it in positions). A line ending in a backslash
// continues on the next, as in a shell. In inline code the command ends at
// the closing backtick, which may be on a later line of the paragraph.
func docCommands(file, text string) []docCommand {
	lines := strings.Split(text, "\n")
	var out []docCommand
	for i := 0; i < len(lines); i++ {
		first := i
		// starts[k] is the offset in logical of physical line first+k.
		starts := []int{0}
		logical := lines[i]
		for strings.HasSuffix(strings.TrimRight(logical, " \t"), `\`) && i+1 < len(lines) {
			logical = strings.TrimSuffix(strings.TrimRight(logical, " \t"), `\`) + " "
			i++
			starts = append(starts, len(logical))
			logical += lines[i]
		}
		for _, m := range goRunRE.FindAllStringSubmatchIndex(logical, -1) {
			line := first
			for k, s := range starts {
				if m[0] >= s {
					line = first + k
				}
			}
			before, rest := logical[:m[0]], logical[m[1]:]
			if strings.Count(before, "`")%2 == 1 {
				// Inline code: stop at the closing backtick, looking at
				// most a few lines on, within the paragraph.
				before = before[strings.LastIndex(before, "`")+1:]
				for j := i + 1; !strings.Contains(rest, "`") && j < len(lines) && j <= i+3 && strings.TrimSpace(lines[j]) != ""; j++ {
					rest += " " + lines[j]
				}
				if k := strings.Index(rest, "`"); k >= 0 {
					rest = rest[:k]
				}
			}
			c := docCommand{where: fmt.Sprintf("%s:%d", file, line+1), name: logical[m[2]:m[3]], args: shellWords(rest)}
			pre := shellWords(before)
			for k := len(pre) - 1; k >= 0; k-- {
				a := envAssignRE.FindStringSubmatch(pre[k])
				if a == nil {
					break
				}
				c.env = append([]string{a[1]}, c.env...)
			}
			out = append(out, c)
		}
	}
	return out
}

// shellWords splits s into words as a shell would, as far as one command
// reaches: it stops at a command separator, a pipe, a redirection, a
// comment, a closing parenthesis, a backtick or a quote left open.
func shellWords(s string) []string {
	var words []string
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return words
		}
		switch s[i] {
		case ';', '|', '&', ')', '`', '#', '<', '>':
			return words
		}
		if j := i; s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j < len(s) && (s[j] == '<' || s[j] == '>') {
				return words // 2>&1, 2> file
			}
		}
		var w strings.Builder
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			c := s[i]
			switch {
			case c == ';' || c == '|' || c == '&' || c == ')' || c == '`':
				return append(words, w.String())
			case c == '\\' && i+1 < len(s):
				w.WriteByte(s[i+1])
				i += 2
			case c == '\'' || c == '"':
				end := strings.IndexByte(s[i+1:], c)
				if end < 0 {
					return words // a quote opened before the command
				}
				w.WriteString(s[i+1 : i+1+end])
				i += end + 2
			default:
				w.WriteByte(c)
				i++
			}
		}
		words = append(words, w.String())
	}
}

func TestDocCommandsParsing(t *testing.T) {
	text := strings.Join([]string{
		"    PROFILES=80:10 LOSSES=\"0 1 2\" \\",
		"        WORKDIR=results/x go run ./examples/headline -quick",
		"go run ./examples/capped -caps \"0 0.5\" \\",
		"    -losses 1 -workdir results/c > out.md 2>&1",
		"The summary (`go run ./examples/summarise",
		"[-json] WORKDIR`) and `go run ./examples/fallback -summary` too.",
		"  go run ./examples/sessions -losses 0   # and -not-a-flag",
	}, "\n")
	got := docCommands("f.md", text)
	want := []docCommand{
		{"f.md:2", "headline", []string{"PROFILES", "LOSSES", "WORKDIR"}, []string{"-quick"}},
		{"f.md:3", "capped", nil, []string{"-caps", "0 0.5", "-losses", "1", "-workdir", "results/c"}},
		{"f.md:5", "summarise", nil, []string{"[-json]", "WORKDIR"}},
		{"f.md:6", "fallback", nil, []string{"-summary"}},
		{"f.md:7", "sessions", nil, []string{"-losses", "0"}},
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("docCommands:\n got %q\nwant %q", got, want)
	}
}

// helpFlags holds what a command's -h output says about its flags.
type helpFlags struct {
	takesValue map[string]bool // flag name -> whether it takes a value
	text       string          // the whole output, for env names
}

// helpFlagRE matches a flag line of flag.PrintDefaults: two spaces, the
// name, and for a flag that takes a value a space and the value's name.
var helpFlagRE = regexp.MustCompile(`^  -([^\s=]+)( [^\s\t]+)?`)

func parseHelp(out string) helpFlags {
	h := helpFlags{takesValue: map[string]bool{}, text: out}
	for _, l := range strings.Split(out, "\n") {
		if m := helpFlagRE.FindStringSubmatch(l); m != nil {
			h.takesValue[m[1]] = m[2] != ""
		}
	}
	return h
}

// checkArgs returns what is wrong with a documented command's words against
// the command's flags, parsing them as the flag package does: flags first,
// the first non-flag word (or "--") ends them.
func checkArgs(c docCommand, h helpFlags) []string {
	var problems []string
	for _, e := range c.env {
		if strings.HasPrefix(e, "GO") || strings.HasPrefix(e, "CGO_") {
			continue // the go command's own settings
		}
		if !strings.Contains(h.text, "env "+e+")") {
			problems = append(problems, fmt.Sprintf("environment variable %s is not read by examples/%s (its -h names no \"env %s\")", e, c.name, e))
		}
	}
	inFlags := true
	for k := 0; k < len(c.args); k++ {
		w := strings.TrimSuffix(strings.TrimPrefix(c.args[k], "["), "]") // usage-style [-json]
		isFlag := len(w) > 1 && w[0] == '-' && w != "--"
		if !inFlags {
			if isFlag {
				problems = append(problems, fmt.Sprintf("%s comes after a positional argument, where examples/%s does not read flags", w, c.name))
			}
			continue
		}
		if w == "--" {
			break // what follows is another program's command line
		}
		if !isFlag {
			inFlags = false
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		takes, ok := h.takesValue[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("examples/%s has no flag -%s", c.name, name))
			continue
		}
		if takes && !hasValue {
			k++ // the next word is the value
		}
	}
	return problems
}

func TestCheckArgs(t *testing.T) {
	h := parseHelp("usage: x [flags]\n\nflags:\n  -json\n    \tprint JSON\n  -losses string\n    \tloss levels (env LOSSES) (default \"0\")\n  -n int\tcount\n")
	for _, tc := range []struct {
		args, env []string
		want      int
	}{
		{[]string{"-losses", "-1", "-json", "-n=3", "dir"}, nil, 0},
		{[]string{"[-json]", "dir"}, []string{"LOSSES", "GOFLAGS"}, 0},
		{[]string{"-bogus"}, nil, 1},
		{[]string{"dir", "-json"}, nil, 1},
		{nil, []string{"REPEATS"}, 1},
	} {
		if got := checkArgs(docCommand{name: "x", args: tc.args, env: tc.env}, h); len(got) != tc.want {
			t.Errorf("checkArgs(%q, env %q) = %q, want %d problems", tc.args, tc.env, got, tc.want)
		}
	}
}

// TestDocsCommandFlags builds every command that README.md, docs/ and the
// packages' doc comments run with `go run ./examples/NAME`, runs it with -h
// and checks that every flag (and every VAR= in front of it) the docs give
// it is one it has.
func TestDocsCommandFlags(t *testing.T) {
	var cmds []docCommand
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, docCommands(f, string(b))...)
	}
	pkgCmds := 0
	for _, f := range packageDocFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, start := goPackageDoc(string(b))
		found := docCommands(f, strings.Repeat("\n", max(0, start-1))+doc)
		cmds, pkgCmds = append(cmds, found...), pkgCmds+len(found)
	}
	if pkgCmds == 0 {
		t.Error("found no `go run ./examples/...` command in the packages' doc.go: the commands' package docs show theirs")
	}
	if len(cmds) == 0 {
		t.Fatal("found no `go run ./examples/...` command in README.md or docs/: the pattern no longer matches how the docs write them")
	}
	byName := map[string][]docCommand{}
	for _, c := range cmds {
		byName[c.name] = append(byName[c.name], c)
	}
	var names []string
	for n, cs := range byName {
		if st, err := os.Stat(filepath.Join("examples", n)); err != nil || !st.IsDir() {
			for _, c := range cs {
				t.Errorf("%s: go run ./examples/%s: there is no such command", c.where, n)
			}
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if testing.Short() {
		t.Skipf("-short: not building %d commands to check their flags", len(names))
	}
	if len(names) == 0 {
		return
	}

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the documented commands: %v", err)
	}
	bin := t.TempDir()
	build := []string{"build", "-buildvcs=false", "-o", bin + string(filepath.Separator)}
	for _, n := range names {
		build = append(build, "./examples/"+n)
	}
	if out, err := exec.Command(goTool, build...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(build, " "), err, out)
	}

	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, filepath.Join(bin, n), "-h").CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatalf("examples/%s -h: %v", n, err)
			}
			h := parseHelp(string(out))
			if code == 1 && len(h.takesValue) == 0 && strings.Contains(string(out), "namespace") {
				// The matrix commands enter a user namespace before they
				// parse flags; where that is not allowed, -h cannot run.
				t.Skipf("examples/%s -h needs a user namespace here: %s", n, strings.TrimSpace(string(out)))
			}
			// Asking for help is not an error: every command exits 0.
			if code != 0 {
				t.Fatalf("examples/%s -h exited %d:\n%s", n, code, out)
			}
			if len(h.takesValue) == 0 {
				t.Fatalf("examples/%s -h listed no flags:\n%s", n, out)
			}
			for _, c := range byName[n] {
				for _, p := range checkArgs(c, h) {
					t.Errorf("%s: %s", c.where, p)
				}
			}
			// A command that takes profiles lists every option in -h,
			// from the one table of options.
			if _, ok := h.takesValue["profiles"]; ok || h.takesValue["profile"] {
				for _, k := range shapedlink.OptionKeys() {
					if !strings.Contains(string(out), "\n  "+k+"=") {
						t.Errorf("examples/%s -h takes profiles but does not list the option %s=", n, k)
					}
				}
			}
		})
	}
}

// A docProfile is one profile written in a doc: where, and its text.
type docProfile struct{ where, text string }

// profileRE finds a profile-shaped word, rtt_ms:rate_mbit and whatever
// follows up to a space, a quote or a closing bracket, where a word can
// start (so the 0.1:8080 of 198.18.0.1:8080 is not one).
var profileRE = regexp.MustCompile("(?:^|[\\s\"'`=(\\[{|])([0-9]+(?:\\.[0-9]*)?(?:ms)?:[0-9.][^\\s\"'`)\\]}|<>;]*)")

// profilesIn returns the profile-shaped words of text, which starts at
// line first of file.
func profilesIn(file string, first int, text string) []docProfile {
	var out []docProfile
	for i, line := range strings.Split(text, "\n") {
		for _, m := range profileRE.FindAllStringSubmatch(line, -1) {
			p := strings.TrimRight(m[1], ".,:;")
			out = append(out, docProfile{where: fmt.Sprintf("%s:%d", file, first+i), text: p})
		}
	}
	return out
}

var fenceRE = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")

// markdownCode returns the code of a Markdown text, each piece with the
// line it starts on: fenced blocks, indented blocks (four spaces or a tab
// after a blank line) and code spans, which may run over several lines of
// a paragraph and open with any number of backticks.
func markdownCode(text string) (code []string, lines []int) {
	all := strings.Split(text, "\n")
	var prose strings.Builder // the rest, one line each, code blocks blanked
	for i := 0; i < len(all); i++ {
		if m := fenceRE.FindStringSubmatch(all[i]); m != nil {
			start, fence := i, m[1]
			var b []string
			for i++; i < len(all); i++ {
				if t := strings.TrimSpace(all[i]); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
					break
				}
				b = append(b, all[i])
			}
			code, lines = append(code, strings.Join(b, "\n")), append(lines, start+2)
			for range i - start + 1 {
				prose.WriteString("\n")
			}
			continue
		}
		indented := strings.HasPrefix(all[i], "    ") || strings.HasPrefix(all[i], "\t")
		if indented && (i == 0 || strings.TrimSpace(all[i-1]) == "") {
			start := i
			var b []string
			for ; i < len(all) && (strings.HasPrefix(all[i], "    ") || strings.HasPrefix(all[i], "\t") || strings.TrimSpace(all[i]) == ""); i++ {
				b = append(b, all[i])
				prose.WriteString("\n")
			}
			i--
			code, lines = append(code, strings.Join(b, "\n")), append(lines, start+1)
			continue
		}
		prose.WriteString(all[i] + "\n")
	}
	// Code spans: a run of n backticks to the next run of exactly n,
	// within a paragraph.
	p := prose.String()
	for i := 0; i < len(p); {
		if p[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(p) && p[i+n] == '`' {
			n++
		}
		open := i + n
		end := -1
		for j := open; j < len(p); {
			if strings.HasPrefix(p[j:], "\n\n") {
				break
			}
			if p[j] != '`' {
				j++
				continue
			}
			k := 0
			for j+k < len(p) && p[j+k] == '`' {
				k++
			}
			if k == n {
				end = j
				break
			}
			j += k
		}
		if end < 0 {
			i = open // an unclosed run is literal backticks
			continue
		}
		code = append(code, strings.ReplaceAll(p[open:end], "\n", " "))
		lines = append(lines, strings.Count(p[:open], "\n")+1)
		i = end + n
	}
	return code, lines
}

// goPackageDoc returns a Go file's package comment, its lines without
// "//", and the line it starts on.
func goPackageDoc(text string) (string, int) {
	var doc []string
	start := 0
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "//go:build"):
		case strings.HasPrefix(line, "//"):
			if len(doc) == 0 {
				start = i + 1
			}
			doc = append(doc, strings.TrimPrefix(line, "//"))
		case strings.HasPrefix(line, "package "):
			return strings.Join(doc, "\n"), start
		default:
			doc, start = nil, 0
		}
	}
	return "", 0
}

// refusedRE finds the mark of the profiles a file shows because they are
// refused: "refused on purpose:" and the profiles, in an HTML comment in
// Markdown or a comment outside the package doc in Go. It excuses them in
// that file only.
var refusedRE = regexp.MustCompile(`refused on purpose: ([^\n>]*)`)

// packageDocFiles lists every package's doc.go, as paths relative to the
// repository root.
func packageDocFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "doc.go" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// docProfiles returns every profile in README.md, docs/ and the doc.go
// files (Markdown: code spans and blocks; Go: the whole package comment,
// which has no other mark for code), and the profiles marked as refused
// on purpose, as file + " " + profile.
func docProfiles(t *testing.T) (found []docProfile, refused map[string]bool) {
	t.Helper()
	refused = map[string]bool{}
	files := append(docFiles(t), packageDocFiles(t)...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		switch {
		case strings.HasSuffix(f, ".md"):
			code, lines := markdownCode(text)
			for i, c := range code {
				found = append(found, profilesIn(f, lines[i], c)...)
			}
		case strings.HasSuffix(f, ".go"):
			doc, start := goPackageDoc(text)
			found = append(found, profilesIn(f, start, doc)...)
		default:
			continue
		}
		for _, m := range refusedRE.FindAllStringSubmatch(text, -1) {
			for _, p := range strings.Fields(strings.TrimSuffix(strings.TrimSpace(m[1]), "--")) {
				refused[f+" "+p] = true
			}
		}
	}
	return found, refused
}

// specFiles writes, in the current directory, a valid file for each
// schedule or trace file a profile names, so that the profile can be
// parsed as a reader would parse it beside their own file.
func specFiles(t *testing.T, profile string) {
	t.Helper()
	for _, opt := range strings.Split(profile, ",") {
		key, val, _ := strings.Cut(opt, "=")
		_, key, _ = strings.Cut("."+key, ".")
		if i := strings.LastIndex(key, "."); i >= 0 {
			key = key[i+1:]
		}
		kind, _, _ := strings.Cut(val, ":")
		content := ""
		switch {
		case key == "schedule" && kind != "blackout" && kind != "step":
			content = `{"changes": [{"at": "1s", "set": "delay", "value": 40}]}`
		case key == "trace" && kind != "const" && kind != "cell":
			content = "1\n2\n"
		default:
			continue
		}
		if filepath.IsAbs(val) || strings.Contains(val, "..") {
			t.Fatalf("profile %q names the file %q outside the directory it is read in", profile, val)
		}
		if err := os.MkdirAll(filepath.Dir(val), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(val, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsProfilesParse parses every profile that README.md, docs/ and
// the doc.go files show, as a reader would copy it: each must parse, and
// print back as a profile that parses to the same, unless the doc marks
// it as refused on purpose, which it then must be.
func TestDocsProfilesParse(t *testing.T) {
	found, refused := docProfiles(t)
	if len(found) < 20 {
		t.Fatalf("found only %d profiles in the docs: the search no longer finds how they are written", len(found))
	}
	t.Chdir(t.TempDir()) // for the schedule and trace files they name
	seen := map[string]bool{}
	for _, p := range found {
		specFiles(t, p.text)
		prof, err := shapedlink.ParseProfile(p.text)
		file, _, _ := strings.Cut(p.where, ":")
		mark := file + " " + p.text
		seen[mark] = true
		switch {
		case refused[mark] && err == nil:
			t.Errorf("%s: %q is marked as refused on purpose but parses", p.where, p.text)
		case refused[mark]:
		case err != nil:
			t.Errorf("%s: %v", p.where, err)
		default:
			if q, err := shapedlink.ParseProfile(prof.String()); err != nil || q != prof {
				t.Errorf("%s: %q prints as %q, which parses to %+v, %v", p.where, p.text, prof.String(), q, err)
			}
		}
	}
	for mark := range refused {
		if !seen[mark] {
			file, p, _ := strings.Cut(mark, " ")
			t.Errorf("%s: %q is marked as refused on purpose but not shown where profiles are looked for", file, p)
		}
	}
}

func TestMarkdownCode(t *testing.T) {
	text := strings.Join([]string{
		"Prose 17:41 is a time, `80:10` a profile, and ``a `80:10:1` span``",
		"with `a span that",
		"runs on 150:2` to the next line.",
		"",
		"    indented 20:50,up.rate=5",
		"",
		"```sh",
		"go run ./examples/calibrate -profiles \"5:1000 80:10,jitter=5ms/normal\"",
		"```",
		"After 12:30 an unclosed ` and 80:0.",
	}, "\n")
	code, lines := markdownCode(text)
	var got []string
	for i, c := range code {
		for _, p := range profilesIn("f.md", lines[i], c) {
			got = append(got, p.where+" "+p.text)
		}
	}
	want := []string{"f.md:5 20:50,up.rate=5", "f.md:8 5:1000", "f.md:8 80:10,jitter=5ms/normal", "f.md:1 80:10", "f.md:1 80:10:1", "f.md:2 150:2"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("profiles found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDocsProfilesInGolden: every profile the docs show (and do not mark
// as refused) is in shapedlink's golden list, so the golden test pins what
// each of them becomes on both backends.
func TestDocsProfilesInGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("shapedlink", "testdata", "golden", "profiles.txt"))
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		golden[strings.TrimSpace(line)] = true
	}
	found, refused := docProfiles(t)
	missing := map[string]bool{}
	for _, p := range found {
		file, _, _ := strings.Cut(p.where, ":")
		if !refused[file+" "+p.text] && !golden[p.text] && !missing[p.text] {
			missing[p.text] = true
			t.Errorf("%s: %q is not in shapedlink/testdata/golden/profiles.txt", p.where, p.text)
		}
	}
}

// TestDocsListTheOptionKeys: the package doc's list of keys and
// docs/link-description.md's table of keys name exactly the options the
// code has (the one table, shapedlink.OptionKeys).
func TestDocsListTheOptionKeys(t *testing.T) {
	want := map[string]bool{}
	for _, k := range shapedlink.OptionKeys() {
		want[k] = true
	}
	check := func(where string, got map[string]bool) {
		t.Helper()
		for k := range want {
			if !got[k] {
				t.Errorf("%s does not list the option key %q", where, k)
			}
		}
		for k := range got {
			if !want[k] {
				t.Errorf("%s lists %q, which is not an option key", where, k)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join("shapedlink", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The block after "The keys are:": "//\tkey=FORM[, key=FORM]  what".
	keyRE := regexp.MustCompile(`(?:^|, )([a-z_]+)=`)
	inDoc := map[string]bool{}
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(line, "The keys are:"):
			block = true
		case block && strings.HasPrefix(line, "//\t") && !strings.HasPrefix(line, "//\t "):
			cols := strings.SplitN(strings.TrimPrefix(line, "//\t"), "  ", 2)
			for _, m := range keyRE.FindAllStringSubmatch(cols[0], -1) {
				inDoc[m[1]] = true
			}
		case block && line == "//":
			if len(inDoc) > 0 {
				block = false
			}
		}
	}
	check("shapedlink/doc.go", inDoc)
	b, err = os.ReadFile(filepath.Join("docs", "link-description.md"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	cellRE := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(strings.TrimPrefix(line, "|"), "|", 2)[0]
		for _, m := range cellRE.FindAllStringSubmatch(first, -1) {
			inTable[m[1]] = true
		}
	}
	check("docs/link-description.md's table of keys", inTable)
}
