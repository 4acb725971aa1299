package shapedlink

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel/linkmodeltest"
	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
	"github.com/vishvananda/netlink"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/links.txt from the code as it is")

// TestGoldenLinks pins what every profile the docs show becomes: the
// netem attributes sent for each direction (netem's TCA_OPTIONS, and tbf's
// and the discipline's for a queue discipline), the emulator's applied
// line, and the emulator's model as it runs (a fingerprint of every
// verdict and due time for a fixed arrival sequence, schedule changes
// applied as the forwarding loop applies them). A change to how a
// direction is described or carried must leave all of it byte for byte
// as it was; testdata/golden/profiles.txt lists the profiles (the root
// package's docs test checks that it lists every profile in the docs).
func TestGoldenLinks(t *testing.T) {
	profiles := goldenProfiles(t)
	var out strings.Builder
	t.Chdir(filepath.Join("testdata", "golden")) // the schedule and trace files the profiles name
	for _, text := range profiles {
		p, err := ParseProfile(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		dirs, err := p.load()
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		fmt.Fprintf(&out, "profile %s\n  string %s\n", text, p.String())
		if why := notOnNetem(dirs); why != "" {
			fmt.Fprintf(&out, "  netem refused: %s\n", why)
		} else {
			for _, d := range []Dir{Down, Up} {
				seed := uint64(7)
				if d == Up {
					seed = backSeed(seed)
				}
				fmt.Fprintf(&out, "  netem %s %s\n", d, goldenNetem(t, p.Direction(d), seed))
			}
		}
		dirs[Down].Seed, dirs[Up].Seed = 7, backSeed(7)
		for i, ed := range dirs {
			fmt.Fprintf(&out, "  emulator %s emulator %s\n  model %s %s\n", Dir(i), ed.Describe(), Dir(i), linkmodeltest.Fingerprint(ed))
		}
	}
	got := out.String()
	path := "links.txt" // in testdata/golden
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./shapedlink/ -run TestGoldenLinks -update-golden to write it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("testdata/golden/links.txt line %d:\n got %s\nwant %s", i+1, g, w)
				break
			}
		}
	}
}

// goldenProfiles reads testdata/golden/profiles.txt: one profile a line,
// # comments.
func goldenProfiles(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "golden", "profiles.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("only %d golden profiles", len(out))
	}
	return out
}

// goldenNetem is the netem attributes for d with seed, as hex: netem's
// TCA_OPTIONS, then tbf's and the discipline's for a queue discipline.
func goldenNetem(t *testing.T, d Direction, seed uint64) string {
	t.Helper()
	attrs := netlink.QdiscAttrs{LinkIndex: 2, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	opts, err := netemnl.Options(netemnl.Root(attrs, d), d, seed)
	if err != nil {
		t.Fatal(err)
	}
	s := "netem " + hex.EncodeToString(opts.Serialize())
	if d.Queue.Managed() {
		tbf, disc, err := netemnl.ChainOptions(d)
		if err != nil {
			t.Fatal(err)
		}
		s += " tbf " + hex.EncodeToString(tbf.Serialize()) + " " + d.Queue.Kind.String() + " " + hex.EncodeToString(disc.Serialize())
	}
	return s
}
