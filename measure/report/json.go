package report

import (
	"encoding/json"
	"io"

	"github.com/shakenfist/quicbench/measure/results"
)

// JSON builds a report from runs and writes it to w as indented JSON: the
// same figures as the markdown, unrounded, with units in the field names.
func JSON(w io.Writer, runs []results.Run, opts Options) error {
	rep, err := Build(runs, opts)
	if err != nil {
		return err
	}
	return rep.WriteJSON(w)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
