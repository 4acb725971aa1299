package summary

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/stats"
)

// TestVerdictsFromSamplesMatchSummary recomputes each committed samples
// directory's figures and finds every arm's p50 and p95 in the summary
// committed beside it, within 0.1 ms.
func TestVerdictsFromSamplesMatchSummary(t *testing.T) {
	files, _ := filepath.Glob("../../../docs/results/*/" + KeysCSV)
	deeper, _ := filepath.Glob("../../../docs/results/*/*/" + KeysCSV)
	files = append(files, deeper...)
	if len(files) == 0 {
		t.Fatal("no committed samples under docs/results")
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		v, err := VerdictsFromSamples(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		cells := summaryCellRows(t, filepath.Join(dir, "summary.md"))
		var order []string // the cells in the figures' order
		for _, a := range v.Arms {
			if !slices.Contains(order, a.Cell) {
				order = append(order, a.Cell)
			}
		}
		if len(cells) != len(order) {
			t.Errorf("%s: summary.md has %d live cell tables, the samples %d cells", dir, len(cells), len(order))
			continue
		}
		for _, a := range v.Arms {
			rows := cells[slices.Index(order, a.Cell)]
			want, ok := rows[a.Arm]
			if !ok {
				t.Errorf("%s: %s has no row in summary.md", dir, a.Arm)
				continue
			}
			if !near(a.Draw.P50, want[0]) || !near(a.Draw.P95, want[1]) || !near(a.Draw.Spread, want[2]) {
				t.Errorf("%s: %s: recomputed p50 %v p95 %v spread %v, summary.md has %v ms", dir, a.Arm, a.Draw.P50, a.Draw.P95, a.Draw.Spread, want)
			}
		}
	}
}

// summaryCellRows reads a summary's live cell tables, in order: per
// cell, arm -> p50, p95, spread in ms. A cell's table ends where a row
// names an arm it already has.
func summaryCellRows(t *testing.T, path string) []map[string][3]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\| live \| ([a-z0-9+-]+) \| [0-9 of]+ \| ([0-9.]+) \| ([0-9.]+) \| [0-9.]+ \| ([0-9.]+) \|`)
	var out []map[string][3]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var v [3]float64
		for i := range v {
			v[i] = parseMs(t, m[i+2])
		}
		if len(out) == 0 {
			out = append(out, map[string][3]float64{})
		}
		if _, seen := out[len(out)-1][m[1]]; seen {
			out = append(out, map[string][3]float64{})
		}
		out[len(out)-1][m[1]] = v
	}
	return out
}

func parseMs(t *testing.T, s string) float64 {
	t.Helper()
	d, err := msDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return float64(d) / float64(time.Millisecond)
}

func near(d time.Duration, ms float64) bool {
	x := float64(d)/float64(time.Millisecond) - ms
	return x < 0.1 && x > -0.1
}

// TestVerdictsFromSamplesPairs checks the pairs of a made-up directory:
// one arm clearly slower, one alike, and a marker that says so.
func TestVerdictsFromSamplesPairs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, spicelive.SettingsFile), []byte(`{"arms":["tcp","quic","tcp-bbr","quic-per-channel"],"warmup_ns":1000000000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{}
	var keys [][]string
	for _, arm := range []string{"tcp", "quic", "tcp-bbr"} {
		for r := 1; r <= 3; r++ {
			rs := []string{"c", arm, itoa(r)}
			runs = append(runs, append(rs, "false", "0", "1", "1.0", ""))
			for k := 0; k < 10; k++ {
				draw := 1000.0 + float64(10*r+k)
				switch arm {
				case "quic":
					draw += 5
				case "tcp-bbr":
					draw = 100 + float64(k)
				}
				offset := float64(k) * 500 // the first two in the warm-up
				if k < 2 {
					draw = 99999 // left out, else tcp-bbr would not be fast
				}
				keys = append(keys, append(append([]string{}, rs...), itoa(k+1), ftoa(offset), ftoa(draw), "", "0", "0", "", "0", "0"))
			}
		}
	}
	runs = append(runs, []string{"c", "quic-per-channel", "1", "true", "", "", "", ""})
	// Files as written before the later columns were added.
	if err := writeCSV(filepath.Join(dir, RunsCSV), runsHeader[:samplesColumns], runs); err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(filepath.Join(dir, KeysCSV), keysHeader[:12], keys); err != nil {
		t.Fatal(err)
	}
	v, err := VerdictsFromSamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	// quic-per-channel's one run failed: it is listed and compared with none.
	if len(v.Arms) != 4 || len(v.Pairs) != 3 {
		t.Fatalf("%d arms and %d pairs, want 4 and 3", len(v.Arms), len(v.Pairs))
	}
	if a, _ := v.Arm("c", "quic-per-channel"); a.Draw.Unmeasured != 1 || a.MeetsGoal() {
		t.Errorf("quic-per-channel: %+v", a)
	}
	p, ok := v.find("c", "tcp-bbr", "tcp")
	if !ok || p.Verdict != stats.Worse || p.marker("x") != "<!-- verdict x c tcp-bbr<tcp resolved -->" {
		t.Errorf("tcp against tcp-bbr: %+v, marker %q", p, p.marker("x"))
	}
	p, _ = v.find("c", "tcp", "quic")
	if p.Verdict != stats.Unresolved || p.marker("x") != "<!-- verdict x c tcp<quic unresolved -->" || p.Delta != 5*time.Millisecond {
		t.Errorf("quic against tcp: %+v, marker %q", p, p.marker("x"))
	}
	if a, _ := v.Arm("c", "tcp-bbr"); !a.MeetsGoal() || a.Keys != 24 || a.UnderGoal != 24 {
		t.Errorf("tcp-bbr: %+v", a)
	}
	var b strings.Builder
	if err := v.WriteMarkdown(&b); err != nil || !strings.Contains(b.String(), "| tcp-bbr against tcp | -920.0 | 20.0 | better |") ||
		!strings.Contains(b.String(), "| quic-per-channel | 0 of 1 | - |") {
		t.Errorf("markdown: %v\n%s", err, b.String())
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// A directory with the picture's columns gives each arm's frames a
// second, medians over its measured runs, and the markdown shows them.
func TestVerdictsReadThePicture(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, spicelive.SettingsFile), []byte(`{"arms":["tcp","tcp-bbr"],"warmup_ns":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs, keys [][]string
	for _, arm := range []string{"tcp", "tcp-bbr"} {
		for r := 1; r <= 3; r++ {
			fps := map[string]float64{"tcp": 2, "tcp-bbr": 10}[arm] + float64(r)
			pic := &picture.PictureRecord{ClientFrames: 100, DrawnFrames: 120, ClientFPS: fps, DrawnFPS: fps + 5, Delivered: 0.8, Good: arm == "tcp-bbr"}
			row := slices.Concat([]string{"c", arm, itoa(r), "false", "0", "1", "1.0", ""}, make([]string, len(recordHeader)), pictureCells(pic))
			runs = append(runs, row)
			keys = append(keys, []string{"c", arm, itoa(r), "1", "0", "100", "", "0", "0", "", "0", "0", ""})
		}
	}
	if err := writeCSV(filepath.Join(dir, RunsCSV), runsHeader, runs); err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(filepath.Join(dir, KeysCSV), keysHeader, keys); err != nil {
		t.Fatal(err)
	}
	v, err := VerdictsFromSamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := v.Arm("c", "tcp")
	b, _ := v.Arm("c", "tcp-bbr")
	if a.ClientFPS != 4 || a.DrawnFPS != 9 || a.Pictures != 3 || a.GoodPictures != 0 || b.ClientFPS != 12 || b.GoodPictures != 3 {
		t.Errorf("tcp %+v, tcp-bbr %+v", a, b)
	}
	var md strings.Builder
	if err := v.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| 4.0 | 9.0 | 0 of 3 |") || !strings.Contains(md.String(), "frames/s at the client") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
}
