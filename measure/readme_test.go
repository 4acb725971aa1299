package measure_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlock is a fenced Go block in Markdown.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// Every Go block in README.md that calls measure.Run is code from this
// package's tests, word for word (indentation aside), so what a reader
// copies compiles here.
func TestREADMEShowsCompiledCode(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.WriteString(dedent(string(b)))
	}
	found := 0
	for _, m := range goBlock.FindAllStringSubmatch(string(readme), -1) {
		if !strings.Contains(m[1], "measure.Run(") {
			continue
		}
		found++
		if !strings.Contains(src.String(), dedent(m[1])) {
			t.Errorf("README.md shows code that no test in package measure holds word for word; "+
				"copy it from the test (or the test from it):\n%s", m[1])
		}
	}
	if found == 0 {
		t.Error("README.md shows no call of measure.Run: its embedding section should")
	}
}

// dedent drops every line's leading tabs and spaces.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t ")
	}
	return strings.Join(lines, "\n")
}
