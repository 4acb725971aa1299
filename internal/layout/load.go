package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// module is one Go module loaded for analysis: its packages parsed and
// type-checked from source (non-test files for the host system), the
// packages it depends on read from the compiler's export data.
type module struct {
	Path string // module path
	Dir  string // module root directory
	Fset *token.FileSet
	Pkgs []*pkg // the module's packages, by Rel
	// byPath finds a module package by its import path.
	byPath map[string]*pkg
	// std holds the standard-library packages whose interfaces count as
	// satisfied wherever a method matches (see stdInterfaces).
	std map[string]*types.Package
}

// pkg is one package of the module.
type pkg struct {
	Rel        string // import path relative to the module path; "." for the root
	ImportPath string
	Dir        string
	Name       string
	Files      []string // non-test .go files the host build compiles (absolute)
	Other      []string // non-test .go files the host build leaves out
	Tests      []string // _test.go files
	Imports    []string // import paths of the module's packages that Files import
	Syntax     []*ast.File
	Types      *types.Package
	Info       *types.Info
	Generated  map[string]bool // Files that say they are generated
}

// listed is the part of `go list -json` this command reads.
type listed struct {
	ImportPath     string
	Dir            string
	Name           string
	Export         string
	Standard       bool
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	TestGoFiles    []string
	XTestGoFiles   []string
	Imports        []string
	Module         *struct {
		Path string
		Main bool
		Dir  string
	}
	Error *struct{ Err string }
}

// stdInterfaces are the standard library's interfaces a method may be
// written to satisfy without the module naming them: a method that
// completes one of them counts as used.
var stdInterfaces = map[string][]string{
	"fmt":            {"Stringer", "GoStringer", "Formatter"},
	"flag":           {"Value", "Getter"},
	"encoding":       {"TextMarshaler", "TextUnmarshaler", "BinaryMarshaler", "BinaryUnmarshaler"},
	"encoding/json":  {"Marshaler", "Unmarshaler"},
	"io":             {"Reader", "Writer", "Closer", "Seeker", "ReaderAt", "WriterAt", "ReaderFrom", "WriterTo", "ByteReader", "ByteWriter", "StringWriter", "RuneReader"},
	"sort":           {"Interface"},
	"container/heap": {"Interface"},
	"context":        {"Context"},
	"net":            {"Conn", "PacketConn", "Listener", "Addr", "Error"},
	"net/http":       {"Handler", "RoundTripper"},
	"log/slog":       {"LogValuer", "Handler"},
	"io/fs":          {"FS", "File", "FileInfo", "DirEntry"},
}

// load lists the packages of the module rooted at dir with the go
// command, then parses and type-checks them.
func load(dir string) (*module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	args := []string{"list", "-e", "-export", "-deps", "-json", "./..."}
	for p := range stdInterfaces {
		args = append(args, p)
	}
	sort.Strings(args[6:])
	cmd := exec.Command("go", args...)
	cmd.Dir = abs
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", abs, err, strings.TrimSpace(stderr.String()))
	}
	m := &module{Dir: abs, Fset: token.NewFileSet(), byPath: map[string]*pkg{}, std: map[string]*types.Package{}}
	exports := map[string]string{}
	var order []*listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		l := new(listed)
		if err := dec.Decode(l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %v", err)
		}
		if l.Export != "" {
			exports[l.ImportPath] = l.Export
		}
		if l.Module != nil && l.Module.Main {
			if m.Path == "" {
				m.Path = l.Module.Path
				m.Dir = l.Module.Dir
			}
			if l.Error != nil {
				return nil, fmt.Errorf("package %s: %s", l.ImportPath, l.Error.Err)
			}
			order = append(order, l)
		}
	}
	if m.Path == "" {
		return nil, fmt.Errorf("no packages of a main module in %s", abs)
	}
	gc := importer.ForCompiler(m.Fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p, ok := m.byPath[path]; ok {
			if p.Types == nil {
				return nil, fmt.Errorf("%s imported before it was checked", path)
			}
			return p.Types, nil
		}
		return gc.Import(path)
	})
	for _, l := range order {
		p := &pkg{
			ImportPath: l.ImportPath,
			Rel:        rel(m.Path, l.ImportPath),
			Dir:        l.Dir,
			Name:       l.Name,
			Generated:  map[string]bool{},
		}
		for _, f := range append(append([]string{}, l.GoFiles...), l.CgoFiles...) {
			p.Files = append(p.Files, filepath.Join(l.Dir, f))
		}
		for _, f := range l.IgnoredGoFiles {
			if !strings.HasSuffix(f, "_test.go") && strings.HasSuffix(f, ".go") {
				p.Other = append(p.Other, filepath.Join(l.Dir, f))
			}
		}
		for _, f := range append(append([]string{}, l.TestGoFiles...), l.XTestGoFiles...) {
			p.Tests = append(p.Tests, filepath.Join(l.Dir, f))
		}
		for _, f := range l.IgnoredGoFiles {
			if strings.HasSuffix(f, "_test.go") {
				p.Tests = append(p.Tests, filepath.Join(l.Dir, f))
			}
		}
		sort.Strings(p.Files)
		sort.Strings(p.Other)
		sort.Strings(p.Tests)
		for _, i := range l.Imports {
			if i == m.Path || strings.HasPrefix(i, m.Path+"/") {
				p.Imports = append(p.Imports, i)
			}
		}
		if err := p.check(m.Fset, imp); err != nil {
			return nil, err
		}
		m.byPath[p.ImportPath] = p
		m.Pkgs = append(m.Pkgs, p)
	}
	sort.Slice(m.Pkgs, func(i, j int) bool { return m.Pkgs[i].Rel < m.Pkgs[j].Rel })
	for path := range stdInterfaces {
		t, err := gc.Import(path)
		if err != nil {
			return nil, err
		}
		m.std[path] = t
	}
	return m, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// check parses p's files and type-checks them.
func (p *pkg) check(fset *token.FileSet, imp types.Importer) error {
	for _, name := range p.Files {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			p.Generated[name] = true
		}
		p.Syntax = append(p.Syntax, f)
	}
	p.Info = &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	var errs []error
	conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err) }}
	p.Types, _ = conf.Check(p.ImportPath, fset, p.Syntax, p.Info)
	if len(errs) > 0 {
		return fmt.Errorf("type-checking %s: %v", p.ImportPath, errors.Join(errs...))
	}
	return nil
}

// rel is an import path relative to the module path, "." for the root.
func rel(modPath, path string) string {
	if path == modPath {
		return "."
	}
	return strings.TrimPrefix(path, modPath+"/")
}

// relFile is a file's path relative to the module root, with slashes.
func (m *module) relFile(name string) string {
	r, err := filepath.Rel(m.Dir, name)
	if err != nil {
		return name
	}
	return filepath.ToSlash(r)
}

// find returns the module package a command-line argument names: an
// import path, a path relative to the module path, or a directory such
// as ./shapedlink.
func (m *module) find(arg string) (*pkg, error) {
	a := strings.TrimSuffix(filepath.ToSlash(arg), "/")
	a = strings.TrimPrefix(a, "./")
	if a == "" {
		a = "."
	}
	for _, p := range m.Pkgs {
		if p.ImportPath == a || p.Rel == a {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%q is not a package of module %s (give e.g. ./shapedlink)", arg, m.Path)
}
