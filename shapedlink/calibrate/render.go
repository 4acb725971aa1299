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
// The targets are marked ok or MISS: the link's idle p50 error within
// 0.1 ms and p99 error within 0.5 ms (n/a for a link with jitter, a trace
// or a schedule), wire utilisation of at least 95% (n/a over loss), loss
// and the other shares inside their intervals; with iperf3 on a
// wire-sized link a wire share of 95% of the rate up to 1 Gbit/s and 90%
// above, and the unlimited link at least 90% of the wire-sized bare pair;
// keeping offloads 97% up to 1 Gbit/s, 95% up to 2 Gbit/s and 90% above,
// and the unlimited link at least 25% of the bare pair with its offloads
// on. A rate above what the bare pair of the same mode carried in the
// same run is n/a.
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
