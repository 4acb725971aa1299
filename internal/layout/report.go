package main

import (
	"bytes"
	"os"
	"path"
	"sort"
	"strings"
)

// maxMeasureFiles is the most non-test files a package under measure/
// may hold.
const maxMeasureFiles = 15

// Report is everything the command measures.
type Report struct {
	Module   string       `json:"module"`
	Packages []Package    `json:"packages"`
	Unused   []Unused     `json:"unused_exports"`
	Comments []Comment    `json:"long_comments"`
	Funcs    []Func       `json:"long_functions"`
	Levels   []Level      `json:"levels"`
	Files    []FileLayers `json:"file_layers,omitempty"`
}

// Package is one package's size and place.
type Package struct {
	Path  string `json:"path"`  // relative to the module path
	Files int    `json:"files"` // non-test .go files, every system's
	Lines int    `json:"lines"`
	// TooLarge is set for a package under measure/ with more than
	// maxMeasureFiles files.
	TooLarge bool `json:"too_large,omitempty"`
	Floor    int  `json:"floor"`    // 1 + the highest floor it imports
	Exported int  `json:"exported"` // exported names and methods (libraries)
	Unused   int  `json:"unused"`
	// Arrows and BackUp count the package's file-level arrows and
	// those running back up (see FileLayers).
	Arrows int `json:"file_arrows"`
	BackUp int `json:"file_back_up"`
}

// Level is one directory's rooms put on floors: each direct
// subdirectory holding packages is a room with everything under it, and
// the directory's own package, if any, is one more. A room stands above
// the rooms its packages import.
type Level struct {
	Dir     string   `json:"dir"`
	Rooms   []Room   `json:"rooms"`
	Floors  int      `json:"floors"`
	Imports int      `json:"imports"` // imports between packages of different rooms
	BackUp  []Import `json:"back_up"` // those that run back up
}

// Room is a room and its floor.
type Room struct {
	Name  string `json:"name"`
	Floor int    `json:"floor"`
}

// Import is one package importing another.
type Import struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// analyse measures the module rooted at dir.
func analyse(dir string) (*module, *Report, error) {
	m, err := load(dir)
	if err != nil {
		return nil, nil, err
	}
	r := &Report{Module: m.Path}
	r.Unused = unusedExports(m)
	if r.Comments, err = longComments(m); err != nil {
		return nil, nil, err
	}
	if r.Funcs, err = longFuncs(m); err != nil {
		return nil, nil, err
	}
	floors := packageFloors(m)
	unused := map[string]int{}
	for _, u := range r.Unused {
		unused[u.Package]++
	}
	for _, p := range m.Pkgs {
		files, lines, err := size(p)
		if err != nil {
			return nil, nil, err
		}
		fl := fileLayers(m, p)
		r.Packages = append(r.Packages, Package{
			Path:     p.Rel,
			Files:    files,
			Lines:    lines,
			TooLarge: (p.Rel == "measure" || strings.HasPrefix(p.Rel, "measure/")) && files > maxMeasureFiles,
			Floor:    floors[p.ImportPath],
			Exported: exported(m, p),
			Unused:   unused[p.Rel],
			Arrows:   fl.Arrows,
			BackUp:   len(fl.BackUp),
		})
		r.Files = append(r.Files, fl)
	}
	r.Levels = levels(m)
	return m, r, nil
}

// size counts p's non-test .go files, for every system, and their lines.
func size(p *pkg) (files, lines int, err error) {
	for _, name := range append(append([]string{}, p.Files...), p.Other...) {
		b, err := os.ReadFile(name)
		if err != nil {
			return 0, 0, err
		}
		files++
		lines += bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			lines++
		}
	}
	return files, lines, nil
}

// exported counts p's exported names (see candidates).
func exported(m *module, p *pkg) int { return len(candidates(m, p)) }

// packageFloors puts the module's packages on floors by their imports:
// 1 for a package that imports none of the module's.
func packageFloors(m *module) map[string]int {
	floors := map[string]int{}
	var floor func(path string) int
	floor = func(path string) int {
		if f, ok := floors[path]; ok {
			return f
		}
		floors[path] = 0 // Go forbids import cycles
		f := 1
		for _, i := range m.byPath[path].Imports {
			f = max(f, floor(i)+1)
		}
		floors[path] = f
		return f
	}
	for _, p := range m.Pkgs {
		floor(p.ImportPath)
	}
	return floors
}

// levels puts the rooms of the module root, and of every directory with
// two rooms or more, on floors.
func levels(m *module) []Level {
	dirs := map[string]bool{".": true}
	for _, p := range m.Pkgs {
		for d := path.Dir(p.Rel); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var out []Level
	for _, d := range sortedSet(dirs) {
		room := func(rel string) (string, bool) {
			if d == "." {
				if rel == "." {
					return ".", true
				}
				return strings.SplitN(rel, "/", 2)[0], true
			}
			if rel == d {
				return ".", true
			}
			if !strings.HasPrefix(rel, d+"/") {
				return "", false
			}
			return strings.SplitN(strings.TrimPrefix(rel, d+"/"), "/", 2)[0], true
		}
		names := map[string]bool{}
		for _, p := range m.Pkgs {
			if r, ok := room(p.Rel); ok {
				names[r] = true
			}
		}
		if len(names) < 2 {
			continue
		}
		rooms := sortedSet(names)
		index := map[string]int{}
		for i, r := range rooms {
			index[r] = i
		}
		g := newGraph(len(rooms))
		var imports []Import
		for _, p := range m.Pkgs {
			from, ok := room(p.Rel)
			if !ok {
				continue
			}
			for _, i := range p.Imports {
				ir := rel(m.Path, i)
				to, ok := room(ir)
				if !ok || to == from {
					continue
				}
				g.add(index[from], index[to], 1)
				imports = append(imports, Import{From: p.Rel, To: ir})
			}
		}
		l := layer(g)
		lv := Level{Dir: d, Imports: len(imports)}
		for i, r := range rooms {
			lv.Rooms = append(lv.Rooms, Room{Name: r, Floor: l.Floor[i]})
			lv.Floors = max(lv.Floors, l.Floor[i])
		}
		up := map[[2]int]bool{}
		for _, a := range l.Up {
			up[a] = true
		}
		for _, im := range imports {
			f, _ := room(im.From)
			t, _ := room(im.To)
			if up[[2]int{index[f], index[t]}] {
				lv.BackUp = append(lv.BackUp, im)
			}
		}
		sort.SliceStable(lv.Rooms, func(i, j int) bool { return lv.Rooms[i].Floor > lv.Rooms[j].Floor })
		out = append(out, lv)
	}
	return out
}

func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
