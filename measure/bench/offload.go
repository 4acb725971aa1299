package bench

import (
	"encoding/json"
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink"
)

// The -offload flag's two values. wire is the default: every device of
// the matrix's links pinned to wire-sized packets, as the reference
// bench's links were, so the matrices and their offload evidence stay as
// they always were.
const (
	offloadWire = "wire"
	offloadKeep = "keep"
)

// offloadHelp is the -offload flag's help.
const offloadHelp = `how every link's ends handle segmentation offload: "wire" (devices pinned to wire-sized packets, the reference bench's link) ` +
	`or "keep" (the ends keep the kernel's TSO, GSO and checksum offload, and GRO as the kernel sets it, so kernel TCP hands the link super-packets; ` +
	`the emulator judges each wire segment, netem each super-packet whole); the QUIC arms send without GSO either way`

// parseOffload reads -offload: wire (shapedlink.OffloadWire) or keep
// (shapedlink.OffloadKeep).
func parseOffload(s string) (shapedlink.OffloadMode, error) {
	m, err := shapedlink.ParseOffloadMode(s)
	if err != nil {
		return "", fmt.Errorf("-offload %w", err)
	}
	return m, nil
}

// offloadRecord is the offload mode as matrix.json records it: "keep", or
// nothing at all for wire (the field is omitted when empty), so a wire
// matrix's record is what it was before the mode existed and a record
// without the field reads as wire. It is written "wire" where it is
// shown, so that a refused resume names both modes.
type offloadRecord string

// MarshalJSON writes the empty (wire) mode as "wire"; omitempty keeps it
// out of the file, so this is what a comparison of records shows.
func (o offloadRecord) MarshalJSON() ([]byte, error) {
	if o == "" {
		return json.Marshal(offloadWire)
	}
	return json.Marshal(string(o))
}

// UnmarshalJSON reads "wire" (or nothing) as wire and "keep" as keep, and
// refuses anything else.
func (o *offloadRecord) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("offload: %w", err)
	}
	switch s {
	case "", offloadWire:
		*o = ""
	case offloadKeep:
		*o = offloadKeep
	default:
		return fmt.Errorf("offload %q is neither wire nor keep", s)
	}
	return nil
}

// mode is the shapedlink mode the record names.
func (o offloadRecord) mode() shapedlink.OffloadMode { return shapedlink.OffloadMode(o) }
