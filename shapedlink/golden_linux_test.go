package shapedlink

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
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
			fmt.Fprintf(&out, "  emulator %s emulator %s\n  model %s %s\n", Dir(i), ed.Describe(), Dir(i), modelFingerprint(ed))
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

// modelFingerprint runs d's model over a fixed sequence of arrivals, the
// way the forwarding loop drives it (frames leave when due before the
// next arrival is judged; schedule changes apply at the arrivals' times,
// by the model's Advance;
// with a queue discipline the link's choices up to an arrival are made
// before it), and returns a hash of every verdict, due time and flag with
// the totals beside it.
func modelFingerprint(d Direction) string {
	m := linkmodel.New(d, nil)
	h := sha256.New()
	put := func(vs ...int64) {
		var b [8]byte
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			h.Write(b[:])
		}
	}
	type held struct {
		due  int64
		size int
	}
	var ring []held
	var counts [8]int64 // accepted lost overlimit blackout dups reordered marks queue-drops
	hold := func(due int64, size int) {
		i, _ := slices.BinarySearchFunc(ring, due, func(e held, t int64) int {
			if e.due <= t {
				return -1
			}
			return 1
		})
		ring = slices.Insert(ring, i, held{due, size})
	}
	departUpTo := func(t int64) {
		for len(ring) > 0 && ring[0].due <= t {
			m.Depart(ring[0].size)
			ring = ring[1:]
		}
	}
	if m.HasQueue() {
		m.SetDropFunc(func(ref int64, size int, c aqm.Cause) { counts[7]++; put(-3, int64(ref), int64(size), int64(c)) })
	}
	dequeueUpTo := func(t int64) {
		for {
			at, ok := m.NextDequeue()
			if !ok || at > t {
				return
			}
			p, due, edit, queued, ok := m.Dequeue(at)
			if !ok {
				continue
			}
			marked := edit.Mark
			if marked {
				counts[6]++
			}
			put(-2, int64(p.Ref), due, b2i(marked), b2i(queued))
			hold(due, p.Len)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{60, 1514, 1514, 200, 1514, 1000, 98, 1514, 590}
	var now int64
	for i := 0; i < 6000; i++ {
		switch {
		case i%1000 < 250:
			now += int64(time.Microsecond) // a flood: fills any limit
		case rng.IntN(10) < 3:
			now += int64(10 * time.Microsecond) // within a burst
		default:
			now += rng.Int64N(int64(8 * time.Millisecond))
		}
		size := sizes[i%len(sizes)]
		m.Advance(now)
		if m.HasQueue() {
			dequeueUpTo(now)
		}
		departUpTo(now)
		if m.HasQueue() {
			v := m.Enqueue(now, aqm.Packet{Len: size, Flow: uint32(i % 3), ECT: i%2 == 0, Ref: int64(i)})
			put(int64(i), int64(v))
			counts[min(int(v), 3)]++
			continue
		}
		due, v := m.Arrive(now, size)
		if ddue, dv, dq, dr, ok := m.Duplicate(); ok {
			counts[4]++
			put(-1, ddue, int64(dv), b2i(dq), b2i(dr))
			if dv == linkmodel.Accepted {
				hold(ddue, size)
			}
		}
		if v == linkmodel.Accepted && m.Reordered() {
			counts[5]++
		}
		put(int64(i), due, int64(v), b2i(m.Queued()), b2i(m.Reordered()))
		counts[min(int(v), 3)]++
		if v == linkmodel.Accepted {
			hold(due, size)
		}
	}
	return fmt.Sprintf("%s accepted %d lost %d over-limit %d blackout %d dup %d reordered %d marked %d queue-dropped %d",
		hex.EncodeToString(h.Sum(nil))[:16], counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7])
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
