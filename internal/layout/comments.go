package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// longComment is the line count from which a comment block is long.
const longComment = 15

// Comment is a comment block of longComment lines or more.
type Comment struct {
	File   string `json:"file"` // relative to the module root
	Line   int    `json:"line"`
	Lines  int    `json:"lines"`
	Anchor string `json:"anchor"` // the declaration it documents, or inside:F
}

// longComments finds the comment blocks (runs of comments with no blank
// line between them) of longComment lines or more in every .go file of
// the module's package directories, tests and other systems' files
// included, except doc.go files and generated files.
func longComments(m *module) ([]Comment, error) {
	var out []Comment
	fset := token.NewFileSet()
	for _, p := range m.Pkgs {
		names, err := filepath.Glob(filepath.Join(p.Dir, "*.go"))
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, name := range names {
			if filepath.Base(name) == "doc.go" {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			if ast.IsGenerated(f) {
				continue
			}
			seen := map[string]int{}
			for _, g := range f.Comments {
				start, end := fset.Position(g.Pos()), fset.Position(g.End())
				n := end.Line - start.Line + 1
				if n < longComment || exampleOutput(f, g) {
					continue
				}
				a := anchor(f, g)
				seen[a]++
				if seen[a] > 1 {
					a = fmt.Sprintf("%s#%d", a, seen[a])
				}
				out = append(out, Comment{File: m.relFile(name), Line: start.Line, Lines: n, Anchor: a})
			}
		}
	}
	return out, nil
}

// exampleOutput reports whether g is an Example's expected output (a
// block starting "// Output:" or "// Unordered output:" inside an
// Example function): what the Example prints, not prose.
func exampleOutput(f *ast.File, g *ast.CommentGroup) bool {
	first := strings.TrimSpace(strings.TrimPrefix(g.List[0].Text, "//"))
	if !strings.HasPrefix(first, "Output:") && !strings.HasPrefix(first, "Unordered output:") {
		return false
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") &&
			fd.Pos() < g.Pos() && g.End() <= fd.End() {
			return true
		}
	}
	return false
}

// anchor names a comment block by the declaration it sits in
// ("inside:F") or the one that follows it, which it documents; "package"
// for a comment before the package clause, "end" after the last
// declaration.
func anchor(f *ast.File, g *ast.CommentGroup) string {
	if g.End() <= f.Package {
		return "package"
	}
	for _, d := range f.Decls {
		if d.Pos() <= g.Pos() && g.End() <= d.End() {
			return "inside:" + declName(d)
		}
		if g.End() <= d.Pos() {
			return declName(d)
		}
	}
	return "end"
}

func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			return recvName(d.Recv.List[0].Type) + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		if len(d.Specs) == 0 {
			return d.Tok.String()
		}
		switch s := d.Specs[0].(type) {
		case *ast.TypeSpec:
			return s.Name.Name
		case *ast.ValueSpec:
			return s.Names[0].Name
		case *ast.ImportSpec:
			return "import"
		}
	}
	return "?"
}

func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return strings.TrimSpace(fmt.Sprint(e))
		}
	}
}
