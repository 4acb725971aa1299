package shapedlink

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink/internal/inproc"
)

// TestAPIDocShowsInternalTypes: every exported type of this package whose
// definition lives in an internal package (an alias, or a type defined
// as one) names each exported field and method of that type in its own
// doc comment, since go doc shows neither for it and an importer cannot
// read the internal package's. A new alias without them fails here.
func TestAPIDocShowsInternalTypes(t *testing.T) {
	const module = "github.com/shakenfist/quicbench/"
	files := parseDir(t, ".")
	checked := 0
	for _, f := range files {
		imports := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = path
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				sel, ok := ts.Type.(*ast.SelectorExpr)
				if !ts.Name.IsExported() || !ok {
					continue
				}
				pkg, _ := sel.X.(*ast.Ident)
				path := imports[pkg.Name]
				if !strings.Contains(path, "/internal/") || !strings.HasPrefix(path, module) {
					continue
				}
				doc := ts.Doc.Text()
				if doc == "" {
					doc = gd.Doc.Text()
				}
				members := exportedMembers(t, filepath.Join("..", strings.TrimPrefix(path, module)), sel.Sel.Name)
				var missing []string
				for _, m := range members {
					if !regexp.MustCompile(`\b` + m + `\b`).MatchString(doc) {
						missing = append(missing, m)
					}
				}
				if len(missing) > 0 {
					t.Errorf("%s is %s.%s, whose members go doc does not show; its doc comment does not name %s",
						ts.Name.Name, pkg.Name, sel.Sel.Name, strings.Join(missing, ", "))
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no type defined in an internal package; the test no longer reads the package")
	}
}

// parseDir parses the Go files of dir, tests left out.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// exportedMembers lists the exported fields (a struct's) and methods of
// type name in the package in dir.
func exportedMembers(t *testing.T, dir, name string) []string {
	t.Helper()
	var out []string
	found := false
	for _, f := range parseDir(t, dir) {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || ts.Name.Name != name {
						continue
					}
					found = true
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, field := range st.Fields.List {
						for _, n := range field.Names {
							if n.IsExported() {
								out = append(out, n.Name)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || !d.Name.IsExported() {
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.Name == name {
					out = append(out, d.Name.Name)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no type %s in %s", name, dir)
	}
	return out
}

// TestPacketEventFields: PacketEvent carries every field of the
// in-process link's event, in its order, so packetEvent drops nothing.
func TestPacketEventFields(t *testing.T) {
	names := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			out = append(out, ty.Field(i).Name)
		}
		return out
	}
	if ours, theirs := names(PacketEvent{}), names(inproc.Event{}); !slices.Equal(ours, theirs) {
		t.Errorf("PacketEvent has the fields %v, the in-process link's event %v", ours, theirs)
	}
	e := inproc.Event{At: 3, Dir: Up, Seq: 4, Dup: true, Size: 5, What: inproc.Delivered, Due: 6, Corrupted: true, Bit: 7, Marked: true}
	if got, want := packetEvent(e).String(), e.String(); got != want {
		t.Errorf("PacketEvent's String %q, the event's %q", got, want)
	}
	if packetEvent(e).What != PacketDelivered || packetEvent(e).Dir != Up {
		t.Errorf("packetEvent(%+v) = %+v", e, packetEvent(e))
	}
}
