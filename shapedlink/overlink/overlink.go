package overlink

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Config is one run: the link, the two commands and where their input and
// output go.
type Config struct {
	// Profile is the link's shape.
	Profile shapedlink.Profile
	// Link is how the link is built (Backend, Seed, Offload, ...), as
	// shapedlink.New takes it. Its zero Offload is wire-sized packets;
	// examples/overlink asks for shapedlink.OffloadKeep by default.
	Link shapedlink.Options
	// Server is a command line for the server namespace, run as
	// sh -c "exec Server" (one command, with the shell's quoting and
	// variables); "" for none.
	Server string
	// Client is the command for the client namespace and its arguments;
	// empty for the user's shell ($SHELL, or /bin/sh).
	Client []string
	// ServerPort is what the server command must listen on before the
	// client command starts; the zero value waits for any new socket.
	ServerPort ServerPort
	// ServerWait is how long the server command has to listen (with
	// ServerPort.None, how long the client waits for it regardless); 0
	// looks once.
	ServerWait time.Duration
	// Grace is how long the server command has to exit after SIGTERM
	// before it is killed; 0 kills it at once.
	Grace time.Duration
	// Queue samples the server end's egress queue every millisecond
	// into Record.Queue.
	Queue bool
	// Stdin, Stdout and Stderr are the client command's; nil reads
	// nothing and discards. Stderr also takes the server command's
	// output, each line prefixed "server: ", and Run's own notes,
	// prefixed "overlink: ".
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Signals are signals that reach the caller (caught with
	// signal.Notify for Signals()), for Run to act on; nil for none.
	// A value other than a syscall.Signal counts as SIGTERM.
	Signals <-chan os.Signal
}

// Signals are the signals a caller catches for Config.Signals from the
// start: SIGINT, SIGTERM, SIGHUP and SIGQUIT.
func Signals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
}

// Interrupted is Run's error when a signal ended the run before the client
// command had run to its end; a shell would exit 128 + Signal.
type Interrupted struct {
	Signal syscall.Signal
	Stage  string // e.g. "while the link was being built"
}

func (e Interrupted) Error() string {
	return fmt.Sprintf("interrupted by %s %s", signalName(e.Signal), e.Stage)
}

// Record is what a run did: the link as applied, the commands, the client
// command's exit status and the link's counters. Run fills it even when it
// fails; Summary and Warnings render it.
type Record struct {
	Profile string `json:"profile"`
	Backend string `json:"backend"`
	Mode    string `json:"mode"`
	// Offload is how the ends handled segmentation offload: "keep" or
	// "wire".
	Offload       string    `json:"offload"`
	Applied       []string  `json:"applied"`
	ServerCommand []string  `json:"server_command,omitempty"`
	ClientCommand []string  `json:"client_command"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	// Build is which code ran, so a record can be reproduced: its
	// Module, Version, GoVersion, Commit, CommitSource (where Commit came
	// from) and CommitMissing (why Commit is empty).
	Build buildinfo.Info `json:"build"`
	// ExitCode is the client command's: its exit status, or 128 plus the
	// signal that ended it; -1 when it did not run to its end (Error says
	// why).
	ExitCode int `json:"exit_code"`
	// Shaper is the emulator's own account (nil with netem), in wire
	// segments: a super-packet counts as each of its segments.
	Shaper *ShaperRecord `json:"shaper,omitempty"`
	// Egress is each end's egress-hook counters ("server", "client"), in
	// device writes: every packet that left it (a super-packet counts
	// once), and those longer than one wire packet.
	Egress map[string]shapedlink.EgressCounters `json:"egress,omitempty"`
	// Queue is the server end's egress queue, sampled every millisecond
	// (with Config.Queue).
	Queue []shapedlink.QueueSample `json:"queue,omitempty"`
	// LinkError says the link broke while the command ran (the emulator's
	// shaper exited): what the command measured is then not the link's.
	LinkError string `json:"link_error,omitempty"`
	// Error is Run's error, if it had one.
	Error string `json:"error,omitempty"`
}

// ShaperRecord is the emulator's scheduling priority and both directions'
// counters, server->client first, as read once the client command ended.
type ShaperRecord struct {
	Priority   string            `json:"priority"`
	Directions []DirectionRecord `json:"directions"`
	// Unsettled says the counters still moved while they were read (the
	// link carried traffic for all of the reading's 200 ms): the shaper
	// publishes them one at a time, so a direction's balance may then be
	// off by the frames that moved between two counters.
	Unsettled bool `json:"unsettled,omitempty"`
	// KeepAwakeCPUs are the CPUs kept awake beside the emulator, and
	// DepartureWindowMs its departure window (shapedlink.Options'
	// EmulatorKeepAwake and EmulatorDepartureWindow); empty and zero when
	// off.
	KeepAwakeCPUs     []int   `json:"keep_awake_cpus,omitempty"`
	DepartureWindowMs float64 `json:"departure_window_ms,omitempty"`
}

// DirectionRecord is one direction's counters (shapedlink.ShaperStats)
// and what the shaper held when they were read, so that they balance:
//
//	received + duplicates = forwarded + loss + limit + queue + codel +
//	                        blackout + send errors + oversize + held
//
// (socket and unreadable drops are frames the shaper never received).
type DirectionRecord struct {
	shapedlink.ShaperStats
	// Held is the wire segments in the shaper's queue and delay line
	// when the counters were read, HeldBytes their bytes.
	Held      uint64 `json:"held"`
	HeldBytes uint64 `json:"held_bytes"`
}

// newShaperRecord is r as the record keeps it.
func newShaperRecord(r shapedlink.ShaperReport) *ShaperRecord {
	out := &ShaperRecord{Priority: r.Priority, KeepAwakeCPUs: r.KeepAwakeCPUs, DepartureWindowMs: r.DepartureWindowMs}
	for _, d := range r.Directions {
		out.Directions = append(out.Directions, DirectionRecord{ShaperStats: d, Held: d.Packets, HeldBytes: d.Bytes})
	}
	return out
}

// Dropped is every wire segment the shaper received and did not forward
// or hold.
func (d DirectionRecord) Dropped() uint64 {
	return d.LossDrops + d.LimitDrops + d.QueueDrops + d.CoDelDrops + d.BlackoutDrops + d.SendErrors + d.OversizeDrops
}

// Imbalance is received + duplicates less forwarded, dropped and held:
// zero when the counters account for every wire segment.
func (d DirectionRecord) Imbalance() int64 {
	return int64(d.Received+d.Duplicates) - int64(d.Forwarded+d.Dropped()+d.Held)
}
