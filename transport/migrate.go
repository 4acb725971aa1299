package transport

import (
	"errors"
	"time"
)

// ErrCannotMigrate is returned by Migrate for the tcp arm: a TCP connection
// is identified by its address pair, so one bound to the old address cannot
// move, and its channels must be dialled again from the new one.
var ErrCannotMigrate = errors.New("transport: TCP cannot migrate")

// PathMigration is how one QUIC connection moved to a new local address.
// Times are offsets from MigrationResult.Started.
type PathMigration struct {
	// Channels the connection carries.
	Channels []int `json:"channels"`
	// From and To are the local addresses before and after, as the
	// sockets report them (From may be a wildcard such as 0.0.0.0:port).
	From string `json:"from"`
	To   string `json:"to"`
	// Validated is when the path's PATH_CHALLENGE was answered (Probe
	// returned); Switched when Switch returned, after which quic-go sends
	// only on the new path.
	Validated time.Duration `json:"validated_ns"`
	Switched  time.Duration `json:"switched_ns"`
	// Err says why this connection did not move, if it did not.
	Err string `json:"error,omitempty"`
}

// MigrationResult describes one Migrate call.
type MigrationResult struct {
	Started time.Time     `json:"started"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Paths has one entry per QUIC connection, in channel order.
	Paths []PathMigration `json:"paths"`
}
