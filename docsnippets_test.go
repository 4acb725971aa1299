package quicbench_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// goFenceRE finds a fenced Go block in Markdown and the line it opens on.
var goFenceRE = regexp.MustCompile("(?m)^```go\n((?s:.*?))^```")

// notCompiledRE marks a Go block that is not meant to compile (a summary
// of a type, say): an HTML comment on the line before its fence.
var notCompiledRE = regexp.MustCompile(`<!-- not compiled: [^>]+-->\n$`)

// A docSnippet is one fenced Go block of README.md or docs/.
type docSnippet struct {
	file string
	line int
	code string
}

// docSnippets returns every Go block of the docs that is meant to compile.
func docSnippets(t *testing.T) []docSnippet {
	t.Helper()
	var out []docSnippet
	for _, f := range docFiles(t) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range goFenceRE.FindAllStringSubmatchIndex(text, -1) {
			if notCompiledRE.MatchString(text[:m[0]]) {
				continue
			}
			out = append(out, docSnippet{f, strings.Count(text[:m[0]], "\n") + 1, text[m[2]:m[3]]})
		}
	}
	return out
}

// packageDocSnippets returns the Go blocks of the packages' doc comments:
// runs of tab-indented lines that parse as Go, in packages outside
// internal/ (which a module of its own cannot import) and deploy/ (modules
// of their own, whose Examples their own tests run).
func packageDocSnippets(t *testing.T) []docSnippet {
	t.Helper()
	var out []docSnippet
	for _, f := range packageDocFiles(t) {
		if f := filepath.ToSlash(f); strings.Contains(f, "internal/") || strings.HasPrefix(f, "deploy/") {
			continue // internal: not importable from outside; deploy: modules of their own
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, start := goPackageDoc(string(b))
		lines := strings.Split(doc, "\n")
		for i := 0; i < len(lines); i++ {
			if !strings.HasPrefix(lines[i], "\t") {
				continue
			}
			first := i
			var block []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "\t") || strings.TrimSpace(lines[i]) == ""); i++ {
				block = append(block, strings.TrimPrefix(lines[i], "\t"))
			}
			if code := strings.TrimSpace(strings.Join(block, "\n")) + "\n"; parsesAsGo(code) {
				out = append(out, docSnippet{f, start + first, code})
			}
		}
	}
	return out
}

// parsesAsGo reports whether code, "..." left out, is Go declarations or
// statements.
func parsesAsGo(code string) bool {
	code = elidedRE.ReplaceAllString(code, "{}")
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", "package p\n"+code, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}", 0)
	return err == nil
}

// elidedRE matches what a snippet leaves out: "{ ... }" and a line that
// is only "...".
var elidedRE = regexp.MustCompile(`(?m)\{ \.\.\. \}|^\s*\.\.\.\s*$`)

// snippetDeclRE matches a snippet that is declarations (a function, a
// type, a method) rather than statements.
var snippetDeclRE = regexp.MustCompile(`(?m)^(func|type) `)

// snippetVars are what the docs' snippets take from the text around
// them, each with the type the library gives it; snippetVarsIn changes
// some for the snippets of one file.
var snippetVars = map[string]string{
	"ctx": "context.Context", "runCtx": "context.Context", "t": "*testing.T",
	"link": "*shapedlink.Link", "p": "shapedlink.Profile", "addr": "string",
	"channels": "[]net.Conn", "clientTrace": "*spicetrace.Trace", "serverTrace": "*spicetrace.Trace",
	"from": "time.Duration", "to": "time.Duration", "cfg": "spicelike.Config",
	"tcpRepeats": "[]stats.Repeat", "quicRepeats": "[]stats.Repeat", "samples": "[]gsocheck.Sample",
	"path": "measure.Path", "handler": "http.Handler", "fs": "*flag.FlagSet", "args": "[]string",
	"repo": "string", "workdir": "string",
}

var snippetVarsIn = map[string]map[string]string{
	"measure/fallback/doc.go":   {"cfg": "fallback.Config"},
	"measure/pathchange/doc.go": {"cfg": "pathchange.Config"},
	"measure/spicelive/doc.go":  {"cfg": "spicelive.Config", "log": "*slog.Logger"},
}

// snippetTypes are the types the snippets' methods are declared on.
const snippetTypes = `
type tlsArm struct{ measure.Arm }
type ownQUIC struct{ measure.Arm }
`

// snippetPrelude declares the variables a snippet of file takes from its
// text, and the names it declares, so that they are not imported.
func snippetPrelude(file string) (string, map[string]bool) {
	vars := maps.Clone(snippetVars)
	maps.Copy(vars, snippetVarsIn[filepath.ToSlash(file)])
	var b strings.Builder
	b.WriteString("var (\n")
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(&b, "\t%s %s\n", name, vars[name])
	}
	b.WriteString(")\n" + snippetTypes)
	declared := map[string]bool{}
	for name := range vars {
		declared[name] = true
	}
	return b.String(), declared
}

// snippetImports are the packages the snippets name, by the name they
// use; the module's own packages are added from go list.
var snippetImports = map[string]string{
	"context": "context", "fmt": "fmt", "http": "net/http", "log": "log", "net": "net",
	"os": "os", "strconv": "strconv", "synctest": "testing/synctest", "testing": "testing",
	"time": "time", "quic": "github.com/quic-go/quic-go", "exec": "os/exec", "flag": "flag",
	"slog": "log/slog",
}

// snippetMainRE matches a snippet's own main; selectorRE a package's
// exported name, pkg.Name, whose package the snippet then imports.
var (
	snippetMainRE = regexp.MustCompile(`(?m)^func main\(\)`)
	selectorRE    = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`)
)

// snippetSource is the snippet of file as a file of package main: its
// declarations as they are, or its statements as the body of a function,
// with the prelude and the imports it names.
func snippetSource(file, code string, imports map[string]string) string {
	code = elidedRE.ReplaceAllString(code, "{}")
	body := code
	if !snippetDeclRE.MatchString(code) {
		body = "func snippet() error {\n" + code + "\nreturn nil\n}\n"
	}
	if !snippetMainRE.MatchString(code) {
		body += "\nfunc main() {}\n"
	}
	prelude, declared := snippetPrelude(file)
	used := map[string]bool{}
	for _, m := range selectorRE.FindAllStringSubmatch(prelude+body, -1) {
		if p, ok := imports[m[1]]; ok && !declared[m[1]] {
			used[p] = true
		}
	}
	var paths []string
	for p := range used {
		paths = append(paths, fmt.Sprintf("%q", p))
	}
	sort.Strings(paths)
	return "package main\n\nimport (\n" + strings.Join(paths, "\n") + "\n)\n" + prelude + body
}

// snippetErrorRE matches a compiler error line: file, line, message.
var snippetErrorRE = regexp.MustCompile(`(?m)^(?:\./)?(s\d+)/main\.go:(\d+):\d+: (.*)$`)

// TestDocsGoSnippets compiles every fenced Go block of README.md and docs/
// (unless marked "<!-- not compiled: why -->") and every Go block of the
// packages' doc comments (outside internal/), each as a package of a
// module of its own that requires this one: statements become a
// function's body, names the text around them gives (ctx, link, ...) are
// declared with the library's types, and "..." is left out. Only the
// complaints a snippet cannot help (a variable or import it leaves
// unused) are forgiven; a name, a signature or a type the library does
// not have fails the test.
func TestDocsGoSnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the library in a module of its own; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the snippets with")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{}
	for k, v := range snippetImports {
		imports[k] = v
	}
	out, err := exec.Command(goBin, "list", "-f", "{{.Name}} {{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, path, ok := strings.Cut(l, " "); ok && name != "main" && !strings.Contains(path, "/internal/") {
			imports[name] = path
		}
	}
	snippets := docSnippets(t)
	if len(snippets) < 10 {
		t.Fatalf("found %d Go blocks in README.md and docs/, fewer than the 10 they held: has the fence changed?", len(snippets))
	}
	pkgSnippets := packageDocSnippets(t)
	if len(pkgSnippets) < 2 {
		t.Fatalf("found %d Go blocks in the packages' doc comments, fewer than the 2 they held: has the indentation changed?", len(pkgSnippets))
	}
	t.Logf("%d Go blocks in README.md and docs/, %d in the packages' doc comments", len(snippets), len(pkgSnippets))
	snippets = append(snippets, pkgSnippets...)
	dir := t.TempDir()
	gomod := "module example.com/docsnippets\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/shakenfist/quicbench v0.0.0\n\tgithub.com/quic-go/quic-go v0.65.0\n)\n\nreplace github.com/shakenfist/quicbench => " + root + "\n"
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", gomod)
	write("go.sum", string(sum))
	for i, s := range snippets {
		write(fmt.Sprintf("s%d/main.go", i), snippetSource(s.file, s.code, imports))
	}
	build := exec.Command(goBin, "build", "-gcflags=-e", "-o", os.DevNull, "./...")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, _ = build.CombinedOutput()
	forgiven := regexp.MustCompile(`declared and not used|imported and not used`)
	for _, m := range snippetErrorRE.FindAllStringSubmatch(string(out), -1) {
		if forgiven.MatchString(m[3]) {
			continue
		}
		var i int
		fmt.Sscanf(m[1], "s%d", &i)
		s := snippets[i]
		t.Errorf("%s: the Go block at line %d does not compile: %s\n%s", s.file, s.line, m[3], s.code)
	}
	if strings.Contains(string(out), "go: ") && !t.Failed() {
		t.Errorf("building the snippets: %s", out)
	}
}
