package bench

import (
	"encoding/json"
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink"
)

// offloadRecord is the offload mode as matrix.json records it: "keep", or
// nothing at all for wire (the field is omitted when empty), so a wire
// matrix's record is what it was before the mode existed and a record
// without the field reads as wire. It is written "wire" where it is
// shown, so that a refused resume names both modes.
type offloadRecord shapedlink.OffloadMode

// MarshalJSON writes the mode by its name (shapedlink.OffloadMode.String);
// omitempty keeps wire out of the file, so this is what a comparison of
// records shows.
func (o offloadRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal(o.mode().String())
}

// UnmarshalJSON reads "wire" (or nothing) as wire and "keep" as keep
// (shapedlink.ParseOffloadMode), and refuses anything else.
func (o *offloadRecord) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("offload: %w", err)
	}
	if s == "" {
		s = shapedlink.OffloadWire.String()
	}
	m, err := shapedlink.ParseOffloadMode(s)
	if err != nil {
		return fmt.Errorf("offload: %w", err)
	}
	*o = offloadRecord(m)
	return nil
}

// mode is the shapedlink mode the record names.
func (o offloadRecord) mode() shapedlink.OffloadMode { return shapedlink.OffloadMode(o) }
