package spicelike

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// spicelike is only the traffic shape: it must not reach for sockets,
// namespaces, transports or SPICE's wire format (it reads recorded traces
// through spicelike/spicetrace, which holds only the file format).
func TestImportsStayOutOfSocketsAndSPICE(t *testing.T) {
	forbidden := []string{"net", "github.com/shakenfist/quicbench/transport", "github.com/shakenfist/quicbench/shapedlink",
		"github.com/shakenfist/quicbench/spicelike/spiceproto", "github.com/quic-go/quic-go"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
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
