package main

import (
	"go/types"
	"sort"
)

// FileLayers is a package's files put on floors: a file stands above the
// files that declare the top-level names (package-level names and
// methods) it uses.
type FileLayers struct {
	Package string `json:"package"`
	Files   []File `json:"files"`
	Arrows  int    `json:"arrows"` // pairs of files, one using the other
	// BackUp are the arrows that run back up: the least there can be
	// when the files form circles (exact for circles of up to
	// exactLimit files, else a heuristic's).
	BackUp []Arrow `json:"back_up"`
	Floors int     `json:"floors"`
}

// File is one file and its floor.
type File struct {
	Name  string `json:"name"` // relative to the module root
	Floor int    `json:"floor"`
}

// Arrow is a file's use of names declared in another.
type Arrow struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Names []string `json:"names"` // the names From uses from To
}

// fileLayers puts p's non-test files (those the host build compiles) on
// floors.
func fileLayers(m *module, p *pkg) FileLayers {
	index := map[string]int{}
	for i, f := range p.Files {
		index[f] = i
	}
	g := newGraph(len(p.Files))
	names := map[[2]int]map[string]bool{}
	for id, o := range p.Info.Uses {
		if o == nil || o.Pkg() != p.Types || !topLevel(o) {
			continue
		}
		from, ok := index[m.Fset.Position(id.Pos()).Filename]
		if !ok {
			continue
		}
		to, ok := index[m.Fset.Position(o.Pos()).Filename]
		if !ok || to == from {
			continue
		}
		k := [2]int{from, to}
		if names[k] == nil {
			names[k] = map[string]bool{}
			g.add(from, to, 1)
		}
		names[k][objName(o)] = true
	}
	l := layer(g)
	fl := FileLayers{Package: p.Rel, Arrows: g.arcs()}
	for i, f := range p.Files {
		fl.Files = append(fl.Files, File{Name: m.relFile(f), Floor: l.Floor[i]})
		fl.Floors = max(fl.Floors, l.Floor[i])
	}
	sort.SliceStable(fl.Files, func(i, j int) bool { return fl.Files[i].Floor > fl.Files[j].Floor })
	for _, a := range l.Up {
		var ns []string
		for n := range names[a] {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		fl.BackUp = append(fl.BackUp, Arrow{From: m.relFile(p.Files[a[0]]), To: m.relFile(p.Files[a[1]]), Names: ns})
	}
	return fl
}

// topLevel says whether o is declared at the top level of its file: a
// package-level name or a method.
func topLevel(o types.Object) bool {
	if o.Parent() == o.Pkg().Scope() {
		return true
	}
	if f, ok := o.(*types.Func); ok {
		return f.Signature().Recv() != nil
	}
	return false
}

func objName(o types.Object) string {
	if f, ok := o.(*types.Func); ok {
		if r := f.Signature().Recv(); r != nil {
			t := r.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if n, ok := t.(*types.Named); ok {
				return n.Obj().Name() + "." + f.Name()
			}
		}
	}
	return o.Name()
}
