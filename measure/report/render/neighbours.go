package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shakenfist/quicbench/measure/neighbours"
	"github.com/shakenfist/quicbench/measure/report"
)

// mdNeighbours is the section on what the session cost the cross flows
// beside it, only when some run carried cross flows.
func mdNeighbours(r *report.Report, m *md) {
	if r.Neighbours == nil {
		return
	}
	m.p("## Neighbours")
	m.p("")
	if err := r.Neighbours.WriteMarkdown(m.w); err != nil {
		m.p("(not written: %v)", err)
	}
	m.p("")
	m.p("Each run's figures are in %s, in the work directory after a matrix and beside the plots of summarise -plots.", neighbours.CSVFile)
	m.p("")
}

// WriteNeighbours writes the neighbours' figures of every run with cross
// flows to dir/neighbours.csv (neighbours.CSVFile) and returns its path;
// it writes nothing and returns "" when no run carried cross flows.
func WriteNeighbours(dir string, r *report.Report) (string, error) {
	if r.Neighbours == nil {
		return "", nil
	}
	var b bytes.Buffer
	if err := r.Neighbours.WriteCSV(&b); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	path := filepath.Join(dir, neighbours.CSVFile)
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}
