package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
)

// Markdown builds a report from runs and writes it to w as markdown.
func Markdown(w io.Writer, runs []results.Run, opts report.Options) error {
	rep, err := report.Build(runs, opts)
	if err != nil {
		return err
	}
	return WriteMarkdown(w, rep)
}

// WriteMarkdown writes the report as markdown: tables a transport engineer
// can paste into a write-up, milliseconds with one decimal.
func WriteMarkdown(w io.Writer, r *report.Report) error {
	bw := bufio.NewWriter(w)
	m := &md{w: bw}
	mdHeader(r, m)
	for _, g := range groups(r) {
		mdGroup(r, m, g)
	}
	mdSessions(r, m)
	mdCapped(r, m)
	mdNeighbours(r, m)
	mdThroughput(r, m)
	mdRecovery(r, m)
	mdCPU(r, m)
	mdConnect(r, m)
	mdGSO(r, m)
	mdWarnings(r, m)
	mdHost(r, m)
	return bw.Flush()
}

type md struct{ w io.Writer }

func (m *md) p(format string, args ...any) { fmt.Fprintf(m.w, format+"\n", args...) }

func (m *md) row(cols ...string) {
	for i, c := range cols {
		cols[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	fmt.Fprintf(m.w, "| %s |\n", strings.Join(cols, " | "))
}

func (m *md) header(cols ...string) {
	m.row(cols...)
	seps := make([]string, len(cols))
	for i := range seps {
		seps[i] = "---"
	}
	m.row(seps...)
}

// footnotes collects notes under a table, each marked once.
type footnotes struct{ notes []string }

// marks are footnote markers that mean nothing else to a markdown renderer
// (an asterisk would start emphasis or a list).
var marks = []string{"†", "‡", "§", "¶", "‖"}

func (f *footnotes) mark(note string) string {
	for i, n := range f.notes {
		if n == note {
			return markFor(i)
		}
	}
	f.notes = append(f.notes, note)
	return markFor(len(f.notes) - 1)
}

func markFor(i int) string {
	if i < len(marks) {
		return marks[i]
	}
	return fmt.Sprintf("[%d]", i+1)
}

func (f *footnotes) write(m *md) {
	if len(f.notes) == 0 {
		return
	}
	m.p("")
	for i, n := range f.notes {
		m.p("%s %s.", markFor(i), strings.TrimSuffix(n, "."))
		if i < len(f.notes)-1 {
			m.p("")
		}
	}
}

func interval(iv report.Interval, notes *footnotes) string {
	s := fmt.Sprintf("%s-%s (%.1f%%)", f1(iv.LoMs), f1(iv.HiMs), 100*iv.Level)
	if !iv.Enough && iv.Note != "" {
		s += notes.mark(iv.Note)
	}
	return s
}

func utest(cp report.Comparison, notes *footnotes) string {
	s := pvalue(cp.U.P)
	if !cp.U.Enough && cp.U.Note != "" {
		s += notes.mark(cp.U.Note)
	}
	return s
}

func pvalue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

func containsPair(ps [][2]string, p [2]string) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func ccLabel(c results.Cell) string {
	if c.Sensitivity {
		return c.CC + " (sensitivity)"
	}
	return c.CC
}

func orNone(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

// f1 is one decimal, the precision every millisecond figure is printed at.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func pct(loss float64) string { return strconv.FormatFloat(loss, 'f', -1, 64) + "%" }

func seconds(msv float64) string {
	return strconv.FormatFloat(msv/1000, 'f', -1, 64) + " s"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
