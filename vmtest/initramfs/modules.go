package initramfs

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Module is one loadable kernel module found in an unpacked kernel package.
type Module struct {
	// Name is the module's name as the kernel knows it (underscores, no
	// ".ko"), read from the module's own .modinfo section.
	Name string
	// Path is the module file's path on the host.
	Path string
	// Depends lists the modules that must be loaded first, read from the
	// "depends=" entry of .modinfo (what depmod itself reads).
	Depends []string
}

// Index maps module names to module files under one kernel's module
// directory.
type Index struct {
	dir   string
	paths map[string]string // normalised name -> path
	read  func(path string) (Module, error)
}

// IndexModules walks dir (a kernel's /lib/modules/<release>) and records
// every module file by name. Compressed modules (.ko.xz, .ko.zst, .ko.gz) are
// recorded too, so that asking for one gives a clear error rather than "not
// found": this package loads modules with finit_module and does not
// decompress them.
func IndexModules(dir string) (*Index, error) {
	idx := &Index{dir: dir, paths: map[string]string{}, read: readModule}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		base := d.Name()
		i := strings.Index(base, ".ko")
		if i <= 0 {
			return nil
		}
		switch base[i:] {
		case ".ko", ".ko.xz", ".ko.zst", ".ko.gz":
			idx.paths[normalise(base[:i])] = path
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("initramfs: indexing modules under %s: %w", dir, err)
	}
	if len(idx.paths) == 0 {
		return nil, fmt.Errorf("initramfs: no kernel modules (*.ko) under %s: is it a kernel's /lib/modules/<release> directory?", dir)
	}
	return idx, nil
}

// normalise turns a module file name into the kernel's module name: the
// kernel treats '-' and '_' in module names as the same character.
func normalise(name string) string {
	return strings.ReplaceAll(name, "-", "_")
}

// size reports how many module files the index holds.
func (x *Index) size() int { return len(x.paths) }

// LoadOrder returns the named modules and everything they depend on, each
// once, ordered so that every module comes after all of its dependencies.
// Names the kernel has built in must not be passed (they have no file); a
// name with no module file gives an error that says so.
func (x *Index) LoadOrder(names ...string) ([]Module, error) {
	var order []Module
	state := map[string]int{} // 1 = visiting, 2 = done
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		name = normalise(name)
		switch state[name] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("initramfs: module dependency cycle: %s -> %s", strings.Join(chain, " -> "), name)
		}
		state[name] = 1
		path, ok := x.paths[name]
		if !ok {
			if len(chain) > 0 {
				return fmt.Errorf("initramfs: module %s (needed by %s) has no file under %s", name, chain[len(chain)-1], x.dir)
			}
			return fmt.Errorf("initramfs: module %s has no file under %s: check the kernel config (it may be built in, =y, or not built at all)", name, x.dir)
		}
		m, err := x.read(path)
		if err != nil {
			return err
		}
		if m.Name != name {
			return fmt.Errorf("initramfs: %s says its name is %q, expected %q", path, m.Name, name)
		}
		for _, d := range m.Depends {
			if err := visit(d, append(chain, name)); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, m)
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// readModule reads a module file's name and dependencies from its .modinfo
// ELF section, a sequence of NUL-terminated "key=value" strings.
func readModule(path string) (Module, error) {
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		if strings.HasSuffix(path, ext) {
			return Module{}, fmt.Errorf("initramfs: %s is compressed; use a kernel package with uncompressed modules "+
				"(Debian 12's linux-image-6.1.0-*-amd64 ships them uncompressed) or decompress it first", path)
		}
	}
	f, err := elf.Open(path)
	if err != nil {
		return Module{}, fmt.Errorf("initramfs: reading module %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return Module{}, fmt.Errorf("initramfs: %s has no .modinfo section: not a kernel module?", path)
	}
	data, err := sec.Data()
	if err != nil {
		return Module{}, fmt.Errorf("initramfs: reading .modinfo of %s: %w", path, err)
	}
	info := parseModinfo(data)
	m := Module{Path: path, Name: info["name"]}
	if m.Name == "" {
		return Module{}, errors.New("initramfs: " + path + ": .modinfo has no name= entry")
	}
	if dep := info["depends"]; dep != "" {
		m.Depends = strings.Split(dep, ",")
	}
	return m, nil
}

// parseModinfo splits the contents of a .modinfo section into its key=value
// entries. A key that appears more than once (alias, parm) keeps its last
// value; the keys this package uses, name and depends, appear once.
func parseModinfo(data []byte) map[string]string {
	out := map[string]string{}
	for _, field := range bytes.Split(data, []byte{0}) {
		k, v, ok := strings.Cut(string(field), "=")
		if !ok || k == "" {
			continue
		}
		out[k] = v
	}
	return out
}

// Names returns the modules' names in order, for logging.
func Names(mods []Module) []string {
	out := make([]string, len(mods))
	for i, m := range mods {
		out[i] = m.Name
	}
	return out
}
