package initramfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type entry struct {
	name       string
	mode       uint32
	rmaj, rmin uint32
	data       string
	ino, nlink uint32
}

// readNewc decodes a newc archive independently of Writer, checking the
// alignment rules the kernel's unpacker relies on.
func readNewc(t *testing.T, b []byte) []entry {
	t.Helper()
	var out []entry
	off := 0
	field := func(i int) uint32 {
		s := string(b[off+6+8*i : off+6+8*i+8])
		v, err := strconv.ParseUint(s, 16, 32)
		if err != nil {
			t.Fatalf("bad hex field %d %q at %d", i, s, off)
		}
		return uint32(v)
	}
	for {
		if off%4 != 0 {
			t.Fatalf("entry at offset %d is not 4-byte aligned", off)
		}
		if string(b[off:off+6]) != "070701" {
			t.Fatalf("bad magic %q at %d", b[off:off+6], off)
		}
		e := entry{ino: field(0), mode: field(1), nlink: field(4), rmaj: field(9), rmin: field(10)}
		size := int(field(6))
		nameLen := int(field(11))
		nameStart := off + 110
		if b[nameStart+nameLen-1] != 0 {
			t.Fatalf("name at %d not NUL-terminated", nameStart)
		}
		e.name = string(b[nameStart : nameStart+nameLen-1])
		dataStart := (nameStart + nameLen + 3) &^ 3
		e.data = string(b[dataStart : dataStart+size])
		off = (dataStart + size + 3) &^ 3
		out = append(out, e)
		if e.name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			return out
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Dir("/lib", 0o755))
	must(w.CharDev("dev/console", 0o600, 5, 1))
	must(w.File("lib/a.ko", 0o644, []byte("12345"))) // needs padding
	must(w.File("init", 0o755, []byte("abcdefgh")))  // no padding
	must(w.File("empty", 0o644, nil))
	must(w.Close())
	got := readNewc(t, buf.Bytes())
	want := []entry{
		{name: "lib", mode: 0o40755, nlink: 2, ino: 1},
		{name: "dev/console", mode: 0o20600, rmaj: 5, rmin: 1, nlink: 1, ino: 2},
		{name: "lib/a.ko", mode: 0o100644, data: "12345", nlink: 1, ino: 3},
		{name: "init", mode: 0o100755, data: "abcdefgh", nlink: 1, ino: 4},
		{name: "empty", mode: 0o100644, nlink: 1, ino: 5},
		{name: "TRAILER!!!", nlink: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("archive decodes as\n%v\nwant\n%v", got, want)
	}
	if err := w.File("late", 0o644, nil); err == nil {
		t.Fatal("adding an entry after Close succeeded; want an error")
	}
}

func TestWriterRejectsBadNames(t *testing.T) {
	w := NewWriter(&bytes.Buffer{})
	for _, n := range []string{"", "/", "a\x00b"} {
		if err := w.File(n, 0o644, nil); err == nil {
			t.Errorf("File(%q) succeeded; want an error", n)
		}
	}
}

// fakeIndex builds an index whose modules are described by a map instead of
// ELF files.
func fakeIndex(deps map[string][]string, names map[string]string) *Index {
	x := &Index{dir: "/fake", paths: map[string]string{}}
	for n := range deps {
		x.paths[n] = "/fake/" + n + ".ko"
	}
	x.read = func(path string) (Module, error) {
		n := strings.TrimSuffix(filepath.Base(path), ".ko")
		name := n
		if alt, ok := names[n]; ok {
			name = alt
		}
		return Module{Name: name, Path: path, Depends: deps[n]}, nil
	}
	return x
}

func TestLoadOrder(t *testing.T) {
	x := fakeIndex(map[string][]string{
		"nft_numgen": {"nf_tables"},
		"nf_tables":  {"nfnetlink", "libcrc32c"},
		"nfnetlink":  nil,
		"libcrc32c":  nil,
		"sch_netem":  nil,
	}, nil)
	mods, err := x.LoadOrder("sch_netem", "nft_numgen", "nf-tables")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Names(mods), " ")
	if want := "sch_netem nfnetlink libcrc32c nf_tables nft_numgen"; got != want {
		t.Fatalf("load order %q, want %q", got, want)
	}
}

func TestLoadOrderErrors(t *testing.T) {
	x := fakeIndex(map[string][]string{
		"a": {"b"}, "b": {"a"}, "c": {"missing"}, "d": nil,
	}, map[string]string{"d": "not_d"})
	for _, tc := range []struct{ name, want string }{
		{"a", "cycle"},
		{"c", "needed by c"},
		{"nope", "built in"},
		{"d", "says its name"},
	} {
		_, err := x.LoadOrder(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadOrder(%q) error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestIndexModulesAndCompressed(t *testing.T) {
	dir := t.TempDir()
	if _, err := IndexModules(dir); err == nil {
		t.Fatal("indexing an empty directory succeeded; want an error")
	}
	sub := filepath.Join(dir, "kernel", "net")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sch-netem.ko.xz", "README"} {
		if err := os.WriteFile(filepath.Join(sub, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x, err := IndexModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	if x.size() != 1 {
		t.Fatalf("index holds %d modules, want 1", x.size())
	}
	if _, err := x.LoadOrder("sch_netem"); err == nil || !strings.Contains(err.Error(), "compressed") {
		t.Fatalf("loading a compressed module: error %v, want one saying it is compressed", err)
	}
}

// TestReadModuleFromKernelPackage reads real modules when a Debian kernel
// package has been unpacked by vmtest/run.sh (VMTEST_KMOD points at its
// /lib/modules/<release>); otherwise it is skipped.
func TestReadModuleFromKernelPackage(t *testing.T) {
	dir := os.Getenv("VMTEST_KMOD")
	if dir == "" {
		t.Skip("VMTEST_KMOD not set; set it to an unpacked kernel's /lib/modules/<release> to read real modules")
	}
	x, err := IndexModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := x.LoadOrder("nf_tables")
	if err != nil {
		t.Fatal(err)
	}
	if got := Names(mods); got[len(got)-1] != "nf_tables" || len(got) < 2 {
		t.Fatalf("nf_tables load order %v: want its dependencies first", got)
	}
}

func TestParseModinfo(t *testing.T) {
	info := parseModinfo([]byte("license=GPL\x00depends=nfnetlink,libcrc32c\x00name=nf_tables\x00"))
	if info["name"] != "nf_tables" || info["depends"] != "nfnetlink,libcrc32c" || info["license"] != "GPL" {
		t.Errorf("parseModinfo = %v, want name nf_tables, depends nfnetlink,libcrc32c, license GPL", info)
	}
}
