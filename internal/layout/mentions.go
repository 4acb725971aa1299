package main

import (
	"go/ast"
	godoc "go/doc"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
)

// isInternal reports whether the package at rel, relative to the module
// path, is importable only from inside the module.
func isInternal(rel string) bool {
	return slices.Contains(strings.Split(rel, "/"), "internal")
}

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// mentions are the identifiers named in a package's Examples as go doc
// shows them (the function's body, or the whole file for a file holding
// one Example and other declarations but no tests) and the words of its
// package comment.
type mentions struct {
	examples, doc map[string]bool
}

// ownMentions returns p's mentions, which make its Examples' names its
// API (markShown) and say why an unused name exists.
func ownMentions(p *pkg) mentions {
	examples, doc := map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.Tests {
		if f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution); err == nil {
			files = append(files, f)
		}
	}
	for _, ex := range godoc.Examples(files...) {
		ast.Inspect(ex.Code, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				examples[id.Name] = true
			}
			return true
		})
	}
	for _, f := range p.Syntax {
		if f.Doc != nil {
			for _, w := range word.FindAllString(f.Doc.Text(), -1) {
				doc[w] = true
			}
		}
	}
	return mentions{examples, doc}
}
