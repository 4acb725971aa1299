package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
)

// longFunc is the line count above which a function is long.
const longFunc = 100

// Func is a function or method of more than longFunc lines.
type Func struct {
	File  string `json:"file"` // relative to the module root
	Line  int    `json:"line"`
	Lines int    `json:"lines"` // from func to its closing brace
	Name  string `json:"name"`  // Name, or Recv.Name for a method
}

// longFuncs finds the functions and methods of more than longFunc lines
// declared in the module's non-test, non-generated files, every
// system's.
func longFuncs(m *module) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	for _, p := range m.Pkgs {
		for _, name := range append(append([]string{}, p.Files...), p.Other...) {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			if ast.IsGenerated(f) {
				continue
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > longFunc {
					out = append(out, Func{File: m.relFile(name), Line: start.Line, Lines: n, Name: funcName(fd)})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// funcName is fd's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.ParenExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}
