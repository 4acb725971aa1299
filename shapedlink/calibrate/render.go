package calibrate

import (
	"encoding/json"
	"io"
)

// WriteTable writes rep as the tables calibrate prints: a header naming
// the offload mode, the links as applied, the idle round trip table, the
// rate and loss table, each profile's notes, then the sweep, iperf3 and
// queue discipline tables, the UDP_SEGMENT flood and the quic-go transfer,
// each only when measured. It returns the first error writing to w.
//
// Each target is marked ok, MISS or n/a; docs/calibration.md, "The
// targets", lists them.
func WriteTable(w io.Writer, rep Report) error {
	ew := &errWriter{w: w}
	printTable(ew, rep)
	return ew.err
}

// WriteJSON writes rep as calibrate -json does: indented JSON, one value,
// which a Report decodes back.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// errWriter keeps the first error writing to w and writes nothing after
// it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
