package netemnl

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

var update = flag.Bool("update", false, "rewrite testdata/encoded.txt from the code as it is")

// encodedCases cover every attribute Options and ChainOptions write: each
// random process with its correlation, both loss models, the three
// distribution tables' use, a seed, a rate past 32 bits (netem's and
// tbf's), a delay of 0 with a correlated jitter, and both disciplines.
var encodedCases = []struct {
	name string
	d    linkspec.Direction
	seed uint64
}{
	{"plain", linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110}, 0},
	{"processes", linkspec.Direction{Delay: 40 * time.Millisecond, Jitter: 5 * time.Millisecond, JitterDist: "normal", JitterCorr: 25, RateMbit: 10, LossPct: 1, LossCorr: 25, DupPct: 2, DupCorr: 10, ReorderPct: 5, ReorderCorr: 20, ReorderGap: 3, CorruptPct: 0.5, CorruptCorr: 25, Limit: 110}, 7},
	{"ge", linkspec.Direction{Delay: 10 * time.Millisecond, RateMbit: 100, GE: linkspec.GE{P: 1, R: 30, OneMinusH: 100, OneMinusK: 0.5}, HasGE: true, Limit: 35}, 0},
	{"fourstate", linkspec.Direction{Delay: 10 * time.Millisecond, Jitter: 3 * time.Millisecond, JitterDist: "paretonormal", RateMbit: 10, FourState: linkspec.FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}, HasFourState: true, Limit: 35}, 1 << 40},
	{"nodelayjitter", linkspec.Direction{Jitter: 500 * time.Microsecond, JitterCorr: 25, RateMbit: 10, Limit: 20}, 0},
	{"rate64", linkspec.Direction{Delay: 250 * time.Microsecond, RateMbit: 40000, Limit: 7}, 0},
	{"fqcodel64", linkspec.Direction{Delay: 30 * time.Millisecond, RateMbit: 40000, Limit: 10240, Queue: linkspec.Queue{Kind: linkspec.FQCoDel, Target: 2 * time.Millisecond, Interval: 40 * time.Millisecond, Flows: 16, Quantum: 300, ECN: true}}, 3},
	{"codel", linkspec.Direction{Delay: 20 * time.Millisecond, RateMbit: 100, LossPct: 1, Limit: 1000, Queue: linkspec.Queue{Kind: linkspec.CoDel}}, 0},
}

// TestEncodedBytes pins the bytes Options and ChainOptions write for
// encodedCases, and describe's line, to testdata/encoded.txt (written by
// the encoder before it moved here from shapedlink). shapedlink's
// TestGoldenLinks pins the same for every profile its docs show.
func TestEncodedBytes(t *testing.T) {
	var out strings.Builder
	for _, c := range encodedCases {
		q := Root(rootAttrs(), c.d)
		opts, err := Options(q, c.d, c.seed)
		if err != nil {
			t.Fatal(err)
		}
		s := hex.EncodeToString(opts.Serialize())
		if c.d.Queue.Managed() {
			tbf, disc, err := ChainOptions(c.d)
			if err != nil {
				t.Fatal(err)
			}
			s += " tbf " + hex.EncodeToString(tbf.Serialize()) + " disc " + hex.EncodeToString(disc.Serialize())
		}
		fmt.Fprintf(&out, "%s\t%s\t%s\n", c.name, describe(q), s)
	}
	path := filepath.Join("testdata", "encoded.txt")
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
	if len(gl) != len(wl) {
		t.Fatalf("%d cases encoded, %s has %d (go test -run TestEncodedBytes -update rewrites it)", len(gl)-1, path, len(wl)-1)
	}
	for i := range gl {
		if gl[i] != wl[i] {
			t.Errorf("%s line %d differs:\n%s", path, i+1, firstDiff(gl[i], wl[i]))
		}
	}
}

// firstDiff shows where got and want first differ, with some context.
func firstDiff(got, want string) string {
	k := 0
	for k < len(got) && k < len(want) && got[k] == want[k] {
		k++
	}
	from := max(0, k-60)
	cut := func(s string) string { return s[from:min(len(s), k+60)] }
	return fmt.Sprintf("at byte %d of %.40s...\n got ...%s...\nwant ...%s...", k, want, cut(got), cut(want))
}
