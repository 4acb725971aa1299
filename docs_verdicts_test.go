package quicbench_test

// The verdicts the docs state about live runs whose per-key samples are
// committed are checked against those samples, by the markers that
// docs/results/README.md ("Verdict markers") describes.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/summary"
	"github.com/shakenfist/quicbench/stats"
)

// verdictDocs are the docs whose verdicts about live runs are checked.
var verdictDocs = []string{"README.md", "docs/spice-live.md", "docs/controllers.md", "docs/paths.md", "docs/quinn.md"}

var (
	verdictMarkRE = regexp.MustCompile(`<!-- verdict (\S+) (\S+) ([a-z0-9./:+-]+)([<=])([a-z0-9./:+-]+) (resolved|unresolved) -->`)
	goalMarkRE    = regexp.MustCompile(`<!-- goal (\S+) (\S+) ([a-z0-9+-]+) (met|missed) -->`)
	noneMarkRE    = regexp.MustCompile(`<!-- verdict none -->`)
	anyMarkRE     = regexp.MustCompile(`<!-- (verdict|goal) `)
	resolvedRE    = regexp.MustCompile(`(?i)\b(un)?resolve[sd]?\b`)
	goalWordRE    = regexp.MustCompile(`(?i)\bgoal\b`)
	goalStateRE   = regexp.MustCompile(`(?i)\b(met|meets|meet|missed|misses|miss|reach|reaches)\b`)
	resultsDirRE  = regexp.MustCompile("docs/results/([A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)?)")
)

// docParagraph is a paragraph or list item of a doc, outside code blocks
// and tables, with the samples directories its section cites.
type docParagraph struct {
	file, text string
	line       int
	cited      []string
}

// sampleDirs is every directory under docs/results with committed
// per-key samples, by the name the docs cite it.
func sampleDirs(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, pat := range []string{"docs/results/*/" + summary.KeysCSV, "docs/results/*/*/" + summary.KeysCSV} {
		files, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			out[summary.ResultsName(filepath.Dir(f))] = true
		}
	}
	return out
}

// citedSamples is the samples directories text names as docs/results/NAME.
func citedSamples(text string, samples map[string]bool) []string {
	var out []string
	for _, m := range resultsDirRE.FindAllStringSubmatch(text, -1) {
		d := strings.TrimSuffix(m[1], ".")
		if first, _, ok := strings.Cut(d, "/"); ok && !samples[d] {
			d = first
		}
		if samples[d] {
			out = append(out, d)
		}
	}
	return out
}

// docParagraphs splits text into paragraphs (blank lines and list items
// start one; fenced code and table rows are left out), each with the
// samples directories named in its section's prose (under its heading)
// or in itself.
func docParagraphs(file, text string, samples map[string]bool) []docParagraph {
	lines := strings.Split(text, "\n")
	// First each line's section and each section's citations.
	section := make([]int, len(lines))
	cites := [][]string{nil}
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		} else if !fenced && strings.HasPrefix(l, "#") {
			cites = append(cites, nil)
		}
		section[i] = len(cites) - 1
		if fenced {
			continue // a command's directory is not the prose's
		}
		for _, d := range citedSamples(l, samples) {
			if !slices.Contains(cites[section[i]], d) {
				cites[section[i]] = append(cites[section[i]], d)
			}
		}
	}
	var out []docParagraph
	cur := docParagraph{file: file}
	flush := func() {
		if strings.TrimSpace(cur.text) != "" {
			out = append(out, cur)
		}
		cur = docParagraph{file: file}
	}
	fenced = false
	for i, l := range lines {
		trim := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trim, "```"):
			flush()
			fenced = !fenced
			continue
		case fenced:
			continue
		case strings.HasPrefix(l, "#"), trim == "", strings.HasPrefix(trim, "|"):
			flush()
			continue
		case strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* "):
			flush()
		}
		if cur.text == "" {
			cur.line = i + 1
			cur.cited = cites[section[i]]
		}
		for _, d := range citedSamples(l, samples) {
			if !slices.Contains(cur.cited, d) {
				cur.cited = append(slices.Clone(cur.cited), d)
			}
		}
		cur.text += l + "\n"
	}
	flush()
	return out
}

// checkVerdictMarks checks every marker of a paragraph against the
// samples, and that a paragraph about a samples directory that states a
// verdict or the key goal carries one.
func checkVerdictMarks(p docParagraph, load func(dir string) (summary.Verdicts, error)) []string {
	var errs []string
	where := fmt.Sprintf("%s:%d", p.file, p.line)
	for _, m := range verdictMarkRE.FindAllStringSubmatch(p.text, -1) {
		var figs [2]summary.ArmFigures
		var err error
		for i, tok := range []string{m[3], m[5]} {
			dir, arm, other := strings.Cut(tok, ":")
			if !other {
				dir, arm = m[1], tok
			}
			var v summary.Verdicts
			if v, err = load(dir); err != nil {
				break
			}
			var ok bool
			if figs[i], ok = v.Arm(m[2], arm); !ok {
				err = fmt.Errorf("no cell %s or arm %s in docs/results/%s", m[2], arm, dir)
				break
			}
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s: %v", where, m[0], err))
			continue
		}
		c, err := stats.Compare(figs[0].Draw, figs[1].Draw)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s: %v", where, m[0], err))
			continue
		}
		rel, res := "=", "unresolved"
		switch {
		case c.Delta > 0:
			rel = "<"
		case c.Delta < 0:
			rel = ">"
		}
		if c.Verdict != stats.Unresolved {
			res = "resolved"
		}
		if rel != m[4] || res != m[6] {
			errs = append(errs, fmt.Sprintf("%s: states %s but the samples say %s%s%s %s (%s against %s: p95 delta %+.1f ms, threshold %.1f ms, %s)",
				where, m[0], m[3], rel, m[5], res, m[5], m[3], c.Delta.Seconds()*1000, c.Threshold.Seconds()*1000, c.Verdict))
		}
	}
	for _, m := range goalMarkRE.FindAllStringSubmatch(p.text, -1) {
		v, err := load(m[1])
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s: %v", where, m[0], err))
			continue
		}
		a, ok := v.Arm(m[2], m[3])
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: %s: no such cell or arm in docs/results/%s", where, m[0], m[1]))
			continue
		}
		if met := m[4] == "met"; met != a.MeetsGoal() {
			errs = append(errs, fmt.Sprintf("%s: states %s but %s's key-to-draw p95 is %.1f ms against the %v goal", where, m[0], m[3], a.Draw.P95.Seconds()*1000, spicelive.KeyGoal))
		}
	}
	if n := len(anyMarkRE.FindAllString(p.text, -1)); n > len(verdictMarkRE.FindAllString(p.text, -1))+len(goalMarkRE.FindAllString(p.text, -1))+len(noneMarkRE.FindAllString(p.text, -1)) {
		errs = append(errs, fmt.Sprintf("%s: a verdict or goal marker is malformed (want <!-- verdict DIR CELL A<B resolved|unresolved --> or <!-- goal DIR CELL ARM met|missed -->)", where))
	}
	if !anyMarkRE.MatchString(p.text) && len(p.cited) > 0 {
		states := resolvedRE.MatchString(p.text) || goalWordRE.MatchString(p.text) && goalStateRE.MatchString(p.text)
		if states {
			first := strings.SplitN(strings.TrimSpace(p.text), "\n", 2)[0]
			errs = append(errs, fmt.Sprintf("%s: states a verdict or the key goal about %v with no marker: %q", where, p.cited, first))
		}
	}
	return errs
}

// TestDocsVerdictsMatchSamples fails when a doc states a verdict or the
// key goal about a committed samples directory that its samples do not
// give, or states one there without a marker to check.
func TestDocsVerdictsMatchSamples(t *testing.T) {
	samples := sampleDirs(t)
	if len(samples) == 0 {
		t.Fatal("no committed per-key samples under docs/results")
	}
	cache := map[string]summary.Verdicts{}
	load := func(dir string) (summary.Verdicts, error) {
		if v, ok := cache[dir]; ok {
			return v, nil
		}
		if !samples[dir] {
			return summary.Verdicts{}, fmt.Errorf("docs/results/%s holds no per-key samples", dir)
		}
		v, err := summary.VerdictsFromSamples(filepath.Join("docs", "results", dir))
		if err == nil {
			cache[dir] = v
		}
		return v, err
	}
	marks := 0
	for _, f := range verdictDocs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range docParagraphs(f, string(b), samples) {
			marks += len(anyMarkRE.FindAllString(p.text, -1))
			for _, e := range checkVerdictMarks(p, load) {
				t.Error(e)
			}
		}
	}
	if marks == 0 {
		t.Errorf("no verdict markers in %v", verdictDocs)
	}
}

// TestDocsVerdictMarksCanFail checks the checker on made-up paragraphs:
// a wrong verdict, a wrong goal and an unmarked verdict each fail.
func TestDocsVerdictMarksCanFail(t *testing.T) {
	v := summary.Verdicts{Arms: []summary.ArmFigures{{Cell: "c", Arm: "a"}, {Cell: "c", Arm: "b"}}}
	for i, p95 := range []time.Duration{250e6, 2250e6} {
		d := &v.Arms[i].Draw
		d.Measured, d.P95, d.P95Min, d.P95Max, d.Spread = 2, p95, p95-500e6, p95+500e6, 1000e6
		d.Repeats = []stats.RepeatSummary{{N: 1}, {N: 1}}
		d.Repeats[0].P95, d.Repeats[1].P95 = p95-500e6, p95+500e6
	}
	load := func(string) (summary.Verdicts, error) { return v, nil }
	for _, c := range []struct {
		text string
		fail bool
	}{
		{"a is faster than b, resolved. <!-- verdict d c a<b resolved -->", false},
		{"b is faster than a. <!-- verdict d c b<a resolved -->", true},
		{"a against b is unresolved. <!-- verdict d c a<b unresolved -->", true},
		{"a meets the goal <!-- goal d c a met -->; b misses it <!-- goal d c b missed -->", false},
		{"b meets the goal <!-- goal d c b met -->", true},
		{"<!-- verdict d c a<b maybe -->", true},
		{"<!-- verdict d c a<e:b resolved -->", false},
		{"<!-- verdict d c e:b<a resolved -->", true},
		{"<!-- verdict d c a<e:z resolved -->", true},
		{"nothing here is unresolved", true},
		{"the goal is met", true},
		{"the rule's spread is the highest minus the lowest", false},
		{"the synthetic cell's quic is resolved worse <!-- verdict none -->", false},
	} {
		errs := checkVerdictMarks(docParagraph{file: "x.md", text: c.text, cited: []string{"d"}}, load)
		if (len(errs) > 0) != c.fail {
			t.Errorf("%q: errors %v, want failing %v", c.text, errs, c.fail)
		}
	}
}

var verdictBlockRE = regexp.MustCompile(`(?s)<!-- verdicts (\S+) begin -->\n(.*?)<!-- verdicts (\S+) end -->`)

// TestDocsVerdictTablesAreGenerated fails when a verdicts table in the
// docs is not what spicelive -verdicts prints from its directory now.
func TestDocsVerdictTablesAreGenerated(t *testing.T) {
	blocks := 0
	for _, f := range verdictDocs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range verdictBlockRE.FindAllStringSubmatch(string(b), -1) {
			blocks++
			if m[1] != m[3] {
				t.Errorf("%s: verdicts block begins with %s and ends with %s", f, m[1], m[3])
				continue
			}
			dir := "docs/results/" + m[1]
			v, err := summary.VerdictsFromSamples(dir)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			var want strings.Builder
			if err := v.WriteMarkdown(&want); err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(m[2]) != strings.TrimSpace(want.String()) {
				t.Errorf("%s: the verdicts of %s are not what the samples give; regenerate them with\n\tgo run ./examples/spicelive -verdicts %s\nwant:\n%s", f, m[1], dir, want.String())
			}
		}
	}
	if blocks == 0 {
		t.Errorf("no verdicts table in %v", verdictDocs)
	}
}
