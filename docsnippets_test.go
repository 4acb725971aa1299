package quicbench_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// elidedRE matches what a snippet leaves out: "{ ... }" and a line that
// is only "...".
var elidedRE = regexp.MustCompile(`(?m)\{ \.\.\. \}|^\s*\.\.\.\s*$`)

// snippetDeclRE matches a snippet that is declarations (a function, a
// type, a method) rather than statements.
var snippetDeclRE = regexp.MustCompile(`(?m)^(func|type) `)

// snippetPrelude is what the docs' snippets take from the text around
// them, declared with the types the library gives them.
const snippetPrelude = `
var (
	ctx                      context.Context
	link                     *shapedlink.Link
	channels                 []net.Conn
	clientTrace, serverTrace *spicetrace.Trace
	from, to                 time.Duration
	cfg                      spicelike.Config
	tcpRepeats, quicRepeats  []stats.Repeat
	samples                  []gsocheck.Sample
	path                     measure.Path
	handler                  http.Handler
)

type tlsArm struct{ measure.Arm }
type ownQUIC struct{ measure.Arm }
`

// snippetImports are the packages the snippets name, by the name they
// use; the module's own packages are added from go list.
var snippetImports = map[string]string{
	"context": "context", "fmt": "fmt", "http": "net/http", "log": "log", "net": "net",
	"os": "os", "strconv": "strconv", "synctest": "testing/synctest", "testing": "testing",
	"time": "time", "quic": "github.com/quic-go/quic-go",
}

// snippetSource is the snippet as a file of package main: its
// declarations as they are, or its statements as the body of a function,
// with the prelude and the imports it names.
func snippetSource(code string, imports map[string]string) string {
	code = elidedRE.ReplaceAllString(code, "{}")
	body := code
	if !snippetDeclRE.MatchString(code) {
		body = "func snippet() error {\n" + code + "\nreturn nil\n}\n"
	}
	if !regexp.MustCompile(`(?m)^func main\(\)`).MatchString(code) {
		body += "\nfunc main() {}\n"
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`).FindAllStringSubmatch(snippetPrelude+body, -1) {
		if _, ok := imports[m[1]]; ok {
			used[imports[m[1]]] = true
		}
	}
	var paths []string
	for p := range used {
		paths = append(paths, fmt.Sprintf("%q", p))
	}
	sort.Strings(paths)
	return "package main\n\nimport (\n" + strings.Join(paths, "\n") + "\n)\n" + snippetPrelude + body
}

// snippetErrorRE matches a compiler error line: file, line, message.
var snippetErrorRE = regexp.MustCompile(`(?m)^(?:\./)?(s\d+)/main\.go:(\d+):\d+: (.*)$`)

// TestDocsGoSnippets compiles every fenced Go block of README.md and docs/
// (unless marked "<!-- not compiled: why -->"), each as a package of a
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
		write(fmt.Sprintf("s%d/main.go", i), snippetSource(s.code, imports))
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
