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
	"io/fs"
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
	// Outside are the packages of modules nested under Dir that require
	// this one, by import path: what they use counts as used.
	Outside []*pkg
	outside map[string]*pkg
	// exports maps import paths to export data files; gc reads them.
	exports map[string]string
	gc      types.Importer
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
	// TestImports are the module's other packages its tests import.
	TestImports []string
	Syntax      []*ast.File
	Types       *types.Package
	Info        *types.Info
	Generated   map[string]bool // Files that say they are generated
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
	TestImports    []string
	XTestImports   []string
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
// command, then parses and type-checks them, and the packages of the
// modules nested under it that require it (see loadNested).
func load(dir string) (*module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var std []string
	for p := range stdInterfaces {
		std = append(std, p)
	}
	sort.Strings(std)
	all, err := goList(abs, std)
	if err != nil {
		return nil, err
	}
	m := &module{Dir: abs, Fset: token.NewFileSet(), byPath: map[string]*pkg{}, outside: map[string]*pkg{}, std: map[string]*types.Package{}}
	m.exports = map[string]string{}
	var order []*listed
	for _, l := range all {
		if l.Export != "" {
			m.exports[l.ImportPath] = l.Export
		}
		if l.Module != nil && l.Module.Main {
			if m.Path == "" {
				m.Path, m.Dir = l.Module.Path, l.Module.Dir
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
	m.gc = importer.ForCompiler(m.Fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := m.exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	for _, l := range order {
		p := newPkg(m.Path, l)
		if err := p.check(m.Fset, m.importer()); err != nil {
			return nil, err
		}
		m.byPath[p.ImportPath] = p
		m.Pkgs = append(m.Pkgs, p)
	}
	sort.Slice(m.Pkgs, func(i, j int) bool { return m.Pkgs[i].Rel < m.Pkgs[j].Rel })
	if err := loadNested(m); err != nil {
		return nil, err
	}
	for _, path := range std {
		t, err := m.gc.Import(path)
		if err != nil {
			return nil, err
		}
		m.std[path] = t
	}
	return m, nil
}

// requires returns the module paths the go.mod in dir requires.
func requires(dir string) (map[string]bool, error) {
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod edit -json in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var f struct{ Require []struct{ Path string } }
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("reading %s/go.mod: %v", dir, err)
	}
	req := map[string]bool{}
	for _, r := range f.Require {
		req[r.Path] = true
	}
	return req, nil
}

// goList runs go list -e -export -deps -json on ./... and the extra
// packages in dir and returns what it printed, dependencies first.
func goList(dir string, extra []string) ([]*listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-export", "-deps", "-json", "./..."}, extra...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var all []*listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		l := new(listed)
		if err := dec.Decode(l); errors.Is(err, io.EOF) {
			return all, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output in %s: %v", dir, err)
		}
		all = append(all, l)
	}
}

// newPkg is the package go list described, its files sorted and its
// imports of modPath's packages (its own tests' included) kept; it is
// not yet parsed.
func newPkg(modPath string, l *listed) *pkg {
	p := &pkg{
		ImportPath: l.ImportPath,
		Rel:        rel(modPath, l.ImportPath),
		Dir:        l.Dir,
		Name:       l.Name,
		Generated:  map[string]bool{},
	}
	for _, f := range append(append([]string{}, l.GoFiles...), l.CgoFiles...) {
		p.Files = append(p.Files, filepath.Join(l.Dir, f))
	}
	for _, f := range l.IgnoredGoFiles {
		switch {
		case strings.HasSuffix(f, "_test.go"):
			p.Tests = append(p.Tests, filepath.Join(l.Dir, f))
		case strings.HasSuffix(f, ".go"):
			p.Other = append(p.Other, filepath.Join(l.Dir, f))
		}
	}
	for _, f := range append(append([]string{}, l.TestGoFiles...), l.XTestGoFiles...) {
		p.Tests = append(p.Tests, filepath.Join(l.Dir, f))
	}
	sort.Strings(p.Files)
	sort.Strings(p.Other)
	sort.Strings(p.Tests)
	inModule := func(i string) bool { return i == modPath || strings.HasPrefix(i, modPath+"/") }
	for _, i := range l.Imports {
		if inModule(i) {
			p.Imports = append(p.Imports, i)
		}
	}
	for _, i := range append(append([]string{}, l.TestImports...), l.XTestImports...) {
		if inModule(i) && i != l.ImportPath {
			p.TestImports = append(p.TestImports, i)
		}
	}
	return p
}

// importer finds the module's packages and those of nested modules by
// their checked types, and any other package by its export data.
func (m *module) importer() types.Importer {
	return importerFunc(func(path string) (*types.Package, error) {
		p, ok := m.byPath[path]
		if !ok {
			p, ok = m.outside[path]
		}
		if !ok {
			return m.gc.Import(path)
		}
		if p.Types == nil {
			return nil, fmt.Errorf("%s imported before it was checked", path)
		}
		return p.Types, nil
	})
}

// loadNested type-checks the packages of every module under m.Dir whose
// go.mod requires m.Path (deploy/k8s, say) into m.Outside: what their
// non-test code uses counts as used. A package found in both modules'
// export data is read from m's.
func loadNested(m *module) error {
	var mods []string
	err := filepath.WalkDir(m.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" || filepath.Dir(path) == m.Dir {
			return nil
		}
		req, err := requires(filepath.Dir(path))
		if err != nil {
			return err
		}
		if req[m.Path] {
			mods = append(mods, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, dir := range mods {
		all, err := goList(dir, nil)
		if err != nil {
			return err
		}
		for _, l := range all {
			if _, ok := m.exports[l.ImportPath]; !ok && l.Export != "" {
				m.exports[l.ImportPath] = l.Export
			}
		}
		for _, l := range all {
			if l.Module == nil || !l.Module.Main {
				continue
			}
			if l.Error != nil {
				return fmt.Errorf("package %s: %s", l.ImportPath, l.Error.Err)
			}
			p := newPkg(m.Path, l)
			p.Rel = m.relFile(l.Dir)
			if err := p.check(m.Fset, m.importer()); err != nil {
				return err
			}
			m.outside[p.ImportPath] = p
			m.Outside = append(m.Outside, p)
		}
	}
	return nil
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
