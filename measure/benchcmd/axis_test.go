package benchcmd

import (
	"fmt"
	"strings"
	"testing"
)

// TestOpeningLineNamesEveryAxis: Main's count of cells names each further
// axis by its label.
func TestOpeningLineNamesEveryAxis(t *testing.T) {
	m, err := parseGapMatrix(t, "-profiles", "80:10", "-losses", "0 1", "-repeats", "2")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, a := range m.AllAxes() {
		labels = append(labels, fmt.Sprintf("%d %s", len(a.Values), a.Label))
	}
	if got := strings.Join(labels, " x "); got != "1 profiles x 1 ccs x 2 losses x 2 gap values x 2 repeats x 2 arms" {
		t.Errorf("axes %q", got)
	}
}

// TestOwnAxisRefused: a matrix's own axis must have a name and values a
// cell can record, each once, and values its runs are named apart by.
func TestOwnAxisRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-gap", "5ms 5ms"}, `gap "5ms" is given twice`},
		{[]string{"-gap", ""}, "-gap is empty"},
		{[]string{"-gap", "5_ms"}, `axis gap: value "5_ms"`},
		{[]string{"-gap", "5MS"}, `axis gap: value "5MS"`},
	} {
		if _, err := parseGapMatrix(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
