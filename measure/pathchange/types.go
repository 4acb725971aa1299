package pathchange

import (
	"log/slog"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// Orders of a path change.
const (
	// OrderMakeFirst migrates (QUIC validates and switches to the new
	// path) while the old address still works, then removes it: a client
	// whose new network is up before the old one goes.
	OrderMakeFirst = "make-first"
	// OrderBreakFirst removes the old address first and then migrates: a
	// client that finds out about the new network only after losing the
	// old one.
	OrderBreakFirst = "break-first"
)

// Change is when and how the client moves. A Config sets At, Order and
// ProbeTimeout; each run fills in the addresses.
type Change struct {
	// At is counted from the moment the client's session is up (Dial
	// returned); the analysis uses the actual time, recorded in events.
	At time.Duration `json:"at_ns"`
	// Order is OrderMakeFirst or OrderBreakFirst.
	Order string `json:"order"`
	// OldAddr and NewAddr are the client's address before and after.
	OldAddr string `json:"old_addr"`
	NewAddr string `json:"new_addr"`
	// ProbeTimeout bounds QUIC's path validation.
	ProbeTimeout time.Duration `json:"probe_timeout_ns"`
}

// roleResult is what a role process reports.
type roleResult struct {
	Role      string                  `json:"role"`
	Err       string                  `json:"error,omitempty"`
	SessionUp time.Time               `json:"session_up"`
	Client    *spicelike.ClientResult `json:"client,omitempty"`
	Server    *spicelike.ServerResult `json:"server,omitempty"`
	State     *transport.State        `json:"state,omitempty"`
	// Migration is the client's Migrate result (QUIC arms).
	Migration *transport.MigrationResult `json:"migration,omitempty"`
	Events    []Event                    `json:"events"`
}

// Event is one thing a side saw or did, with its wall-clock time (all
// processes share the host clock).
type Event struct {
	At   time.Time `json:"at"`
	Side string    `json:"side"` // server, client or link (the orchestrator)
	What string    `json:"what"`
	// Offset is At relative to the path change; set by the analysis.
	Offset time.Duration `json:"offset_from_change_ns"`
}

// runConfig is one run: one loss level, one arm, one repeat.
type runConfig struct {
	Cell     results.Cell
	Profile  shapedlink.Profile // loss included
	Arm      transport.Arm
	Repeat   int
	Workload spicelike.Config
	Change   Change // At, Order and ProbeTimeout; addresses are filled in
	Workdir  string
	Link     shapedlink.Options
	Qlog     bool
	// Linger is how long the server is left running after the client
	// ends before it is stopped: the time in which a stranded TCP server
	// could notice anything by itself.
	Linger time.Duration
	Logger *slog.Logger
	// beforeRemove, if set, runs in the orchestrator just before the old
	// address is removed. Tests use it to widen the moment in which the
	// client has no route.
	beforeRemove func(*shapedlink.Link) error
	// holdEcho, if set, has the client keep the interactive channel's
	// reads from the workload through the change (roleSpec.HoldEcho).
	holdEcho bool
}

func (rc runConfig) dir() string {
	return results.RunDir(rc.Workdir, rc.Cell, string(rc.Arm), rc.Repeat)
}

// recordFile is the path-change record beside each run.json.
const recordFile = "pathchange.json"
