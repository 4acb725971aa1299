package overlink

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// overlink is about the link and processes: it must not reach for
// transports, workloads, statistics or package measure (whose records
// package imports stats).
func TestImportsStayOnTheLink(t *testing.T) {
	const module = "github.com/shakenfist/quicbench/"
	forbidden := []string{module + "transport", module + "spicelike", module + "stats", module + "measure", module + "gsocheck", "github.com/quic-go/quic-go"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files found")
	}
}
