package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// Unused is an exported name that no code outside its package uses.
type Unused struct {
	Package string `json:"package"` // relative to the module path
	Name    string `json:"name"`    // Name, or Type.Method
	Pos     string `json:"pos"`     // file:line
	// Note says where the name does appear, when only other packages'
	// tests use it or only its own package's Examples or package comment
	// name it.
	Note string `json:"note,omitempty"`
}

// unusedExports finds the exported names declared in the non-test,
// non-generated files of the module's library packages (commands
// export nothing) that no other package's non-test code uses. A use is
// a reference to the name, a value of the type in other code, or, for a
// method, completing an interface that the module declares or uses, that
// stdInterfaces lists or that package errors asserts for; a type in what is used, an alias of it and a
// constant of it count too. Tests never count: neither the package's own
// nor other packages'.
func unusedExports(m *module) []Unused {
	used := map[types.Object]bool{}
	said := map[*pkg]mentions{}
	for _, p := range m.Pkgs {
		said[p] = ownMentions(p)
	}
	markReferences(m, used)
	markInterfaceMethods(m, used)
	markShown(m, said, used)
	markAPITypes(m, used)
	markSpellingsAndValues(m, used)
	return unused(m, said, used)
}

// users are the packages whose non-test code counts as using a name:
// the module's and those of the modules nested in it.
func (m *module) users() []*pkg {
	return append(append([]*pkg{}, m.Pkgs...), m.Outside...)
}

// testHelpers returns the module's packages that only tests import:
// other packages' tests import them, and no non-test code does but
// that of other such packages (no package of a nested module is one).
func testHelpers(m *module) map[*pkg]bool {
	byTests := map[string]bool{}
	for _, q := range m.users() {
		for _, i := range q.TestImports {
			byTests[i] = true
		}
	}
	helpers := map[*pkg]bool{}
	for _, p := range m.Pkgs {
		helpers[p] = byTests[p.ImportPath]
	}
	for changed := true; changed; {
		changed = false
		for _, q := range m.users() {
			if helpers[q] {
				continue
			}
			for _, i := range q.Imports {
				if p := m.byPath[i]; p != nil && helpers[p] {
					helpers[p] = false
					changed = true
				}
			}
		}
	}
	return helpers
}

// markUsed marks o used, a generic function or field by its origin.
func markUsed(used map[types.Object]bool, o types.Object) {
	switch o := o.(type) {
	case *types.Func:
		used[o.Origin()] = true
	case *types.Var:
		used[o.Origin()] = true
	default:
		used[o] = true
	}
}

// markReferences marks what other packages' code names, and the types
// of the values it holds.
func markReferences(m *module, used map[types.Object]bool) {
	mark := func(o types.Object) { markUsed(used, o) }
	// References and values in other packages' code.
	for _, q := range m.users() {
		for _, o := range q.Info.Uses {
			if o.Pkg() != nil && o.Pkg() != q.Types {
				mark(o)
			}
		}
		// Files the host build leaves out (other systems' files) are
		// read without types: pkg.Name selectors mark top-level names.
		for _, name := range q.Other {
			markSyntactic(m, name, mark)
		}
	}
	// A type counts as used when a value of it shows in other code,
	// named or not (r := pkg.New() uses pkg.T).
	for _, q := range m.users() {
		seen := map[types.Type]bool{}
		for _, tv := range q.Info.Types {
			apiTypes(tv.Type, seen, func(tn *types.TypeName) {
				if tn.Pkg() != nil && tn.Pkg() != q.Types {
					used[tn] = true
				}
			})
		}
	}
}

// markShown marks, in a package code outside the module can import, the
// names its own Examples show: a library's API is what its Examples show,
// and so are the types that API takes and returns (markAPITypes).
func markShown(m *module, said map[*pkg]mentions, used map[types.Object]bool) {
	for _, p := range m.Pkgs {
		if isInternal(p.Rel) {
			continue
		}
		for _, c := range candidates(m, p) {
			if said[p].examples[c.name[strings.LastIndex(c.name, ".")+1:]] {
				used[c.obj] = true
			}
		}
	}
}

// markAPITypes marks every module type that is part of what is used (a
// parameter, result or exported field of it, or the type of a used
// variable or constant): it cannot be unexported without hiding part of
// an API that is used.
func markAPITypes(m *module, used map[types.Object]bool) {
	var work []types.Object
	for o := range used {
		work = append(work, o)
	}
	inModule := func(o types.Object) bool {
		_, ok := m.byPath[pkgPath(o)]
		return ok
	}
	for len(work) > 0 {
		o := work[len(work)-1]
		work = work[:len(work)-1]
		var t types.Type
		switch o := o.(type) {
		case *types.TypeName:
			if o.IsAlias() {
				t = types.Unalias(o.Type())
			} else {
				t = o.Type().Underlying()
			}
		default:
			t = o.Type()
		}
		apiTypes(t, map[types.Type]bool{}, func(tn *types.TypeName) {
			if !used[tn] && inModule(tn) {
				used[tn] = true
				work = append(work, tn)
			}
		})
	}
}

// markSpellingsAndValues marks, in every package, an alias of a used
// type (the exported spelling of a type declared in an internal package,
// which a user cannot name otherwise) and a constant of a used named type
// (a value of an enumeration that is part of what is used).
func markSpellingsAndValues(m *module, used map[types.Object]bool) {
	for _, p := range m.Pkgs {
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			switch o := scope.Lookup(name).(type) {
			case *types.TypeName:
				if n, ok := types.Unalias(o.Type()).(*types.Named); ok && o.IsAlias() && used[n.Origin().Obj()] {
					used[o] = true
				}
			case *types.Const:
				if n, ok := types.Unalias(o.Type()).(*types.Named); ok && used[n.Obj()] {
					used[o] = true
				}
			}
		}
	}
}

// unused lists the candidates not marked used, noting those that only
// other packages' tests, or the package's own Examples and comment, name.
// In a package only tests import (see testHelpers), a name other
// packages' tests use counts as used.
func unused(m *module, said map[*pkg]mentions, used map[types.Object]bool) []Unused {
	// Other packages' tests do not count, but are noted.
	inTests := map[types.Object]bool{}
	for _, q := range m.Pkgs {
		for _, name := range q.Tests {
			markSyntactic(m, name, func(o types.Object) {
				if o.Pkg() != q.Types {
					inTests[o] = true
				}
			})
		}
	}

	helpers := testHelpers(m)
	var out []Unused
	for _, p := range m.Pkgs {
		examples, docWords := said[p].examples, said[p].doc
		add := func(o types.Object, name string) {
			last := name[strings.LastIndex(name, ".")+1:]
			if used[o] || helpers[p] && inTests[o] {
				return
			}
			pos := m.Fset.Position(o.Pos())
			u := Unused{Package: p.Rel, Name: name, Pos: m.relFile(pos.Filename) + ":" + strconv.Itoa(pos.Line)}
			switch {
			case inTests[o]:
				u.Note = "used only by other packages' tests"
			case examples[last] && docWords[last]:
				u.Note = "named only in its own Examples and package comment"
			case examples[last]:
				u.Note = "named only in its own Examples"
			case docWords[last]:
				u.Note = "named only in its package comment"
			}
			out = append(out, u)
		}
		for _, c := range candidates(m, p) {
			add(c.obj, c.name)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// markSyntactic reads a file the type checker did not and marks the
// top-level names of module packages it selects (pkg.Name).
func markSyntactic(m *module, name string, mark func(types.Object)) {
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
	if err != nil {
		return
	}
	imports := map[string]*pkg{}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		p, ok := m.byPath[path]
		if !ok {
			continue
		}
		local := p.Name
		if is.Name != nil {
			local = is.Name.Name
		}
		imports[local] = p
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if p, ok := imports[x.Name]; ok {
					if o := p.Types.Scope().Lookup(sel.Sel.Name); o != nil {
						mark(o)
					}
				}
			}
		}
		return true
	})
}

// candidate is an exported name: a top-level name or a method of an
// exported type.
type candidate struct {
	obj  types.Object
	name string // Name or Type.Method
}

// candidates returns the exported names declared in p's non-generated
// files: top-level names and the methods of exported types. A command
// (package main) has none: nothing can import it.
func candidates(m *module, p *pkg) []candidate {
	if p.Name == "main" {
		return nil
	}
	var out []candidate
	add := func(o types.Object, name string) {
		if !p.Generated[m.Fset.Position(o.Pos()).Filename] {
			out = append(out, candidate{o, name})
		}
	}
	scope := p.Types.Scope()
	for _, name := range scope.Names() {
		o := scope.Lookup(name)
		if !o.Exported() {
			continue
		}
		add(o, name)
		tn, ok := o.(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		n, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		for i := 0; i < n.NumMethods(); i++ {
			if f := n.Method(i); f.Exported() {
				add(f, name+"."+f.Name())
			}
		}
	}
	return out
}

func pkgPath(o types.Object) string {
	if o.Pkg() == nil {
		return ""
	}
	return o.Pkg().Path()
}

// apiTypes calls visit for each named type t is made of: the element
// types of composite types, the parameters and results of signatures,
// the exported fields of structs and the methods of interfaces.
func apiTypes(t types.Type, seen map[types.Type]bool, visit func(*types.TypeName)) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		visit(t.Origin().Obj())
		for i := 0; i < t.TypeArgs().Len(); i++ {
			apiTypes(t.TypeArgs().At(i), seen, visit)
		}
	case *types.Alias:
		visit(t.Obj())
		apiTypes(types.Unalias(t), seen, visit)
	case *types.Pointer:
		apiTypes(t.Elem(), seen, visit)
	case *types.Slice:
		apiTypes(t.Elem(), seen, visit)
	case *types.Array:
		apiTypes(t.Elem(), seen, visit)
	case *types.Chan:
		apiTypes(t.Elem(), seen, visit)
	case *types.Map:
		apiTypes(t.Key(), seen, visit)
		apiTypes(t.Elem(), seen, visit)
	case *types.Signature:
		apiTypes(t.Params(), seen, visit)
		apiTypes(t.Results(), seen, visit)
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			apiTypes(t.At(i).Type(), seen, visit)
		}
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if f := t.Field(i); f.Exported() {
				apiTypes(f.Type(), seen, visit)
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumMethods(); i++ {
			apiTypes(t.Method(i).Type(), seen, visit)
		}
	}
}
