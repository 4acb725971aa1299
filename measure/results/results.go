package results

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// SchemaVersion is written into every run.json.
const SchemaVersion = 1

// Cell identifies one cell of a matrix.
type Cell struct {
	// Profile is the link profile without loss, in shapedlink's grammar
	// ("80:10"), or, for a profile with a loss model of its own, the
	// whole profile ("80:10,loss=ge:0.3367/33.33").
	Profile string `json:"profile"`
	// RTTms and RateMbit restate the profile for readers.
	RTTms    float64 `json:"rtt_ms"`
	RateMbit float64 `json:"rate_mbit"`
	// LossPct is the per-direction random loss; for a profile with a
	// loss model of its own, the mean over its directions of each one's
	// long-run loss (package plan).
	LossPct float64 `json:"loss_pct"`
	// CC is the kernel TCP congestion control pinned for the tcp arm.
	CC string `json:"cc"`
	// Sensitivity is true for cells that are not the matched headline
	// (TCP other than reno against quic-go's NewReno).
	Sensitivity bool `json:"sensitivity"`
	// Sessions is how many sessions of the workload shared the link at
	// once, each with its own channels (for tcp its own connections, for
	// quic its own connection). Zero means the matrix did not ask (one
	// session, the headline); a sessions matrix records 1 too, so its cells
	// are named apart from the headline's.
	Sessions int `json:"sessions,omitempty"`
	// BulkCapFraction is the saturating channel's rate cap as a fraction of
	// the link rate, and BulkRateCapBps that cap in bits per second of
	// payload (spicelike's Config.BulkRateCap). Zero means uncapped.
	BulkCapFraction float64 `json:"bulk_cap_fraction,omitempty"`
	BulkRateCapBps  int64   `json:"bulk_rate_cap_bps,omitempty"`
	// Axes are the values of the matrix's own axes (beyond those above),
	// "name=value" for each in the matrix's order, separated by spaces
	// ("mtu=1200 tls=1.3"); empty when it has none. Each adds
	// "_name-value" to the directory name and ", name value" to the
	// title. WithAxis adds one; axisValues reads them.
	Axes string `json:"axes,omitempty"`
}

// Dir is the cell's directory name. Sessions, the bulk cap and the
// matrix's own axes add a suffix only when set ("_s4", "_cap0.5",
// "_mtu-1200"), so headline cells keep their names.
func (c Cell) Dir() string {
	d := fmt.Sprintf("%sms-%smbit_loss%s_%s", num(c.RTTms), num(c.RateMbit), num(c.LossPct), c.CC)
	if c.Profile == PathProfile {
		// Nothing was emulated: "0ms-0mbit_loss0" would read as a link.
		d = PathProfile + "_" + c.CC
	}
	d += ProfileSuffix(c.Profile)
	if c.Sessions != 0 {
		d += fmt.Sprintf("_s%d", c.Sessions)
	}
	if c.BulkCapFraction != 0 {
		d += "_cap" + num(c.BulkCapFraction)
	}
	return d + c.axesSuffix()
}

// ProfileSuffix is what a directory name adds for the parts of a profile
// beyond rtt_ms:rate_mbit[:loss_pct]: "" for the short form, so existing
// directories keep their names, and otherwise the limit and the options
// in a form safe in a file name ("80:10@200,up.rate=5" gives
// "_limit200_up.rate-5"), so two profiles never share a directory.
func ProfileSuffix(profile string) string {
	i := strings.IndexAny(profile, "@,")
	if i < 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range profile[i:] {
		switch {
		case r == '@':
			b.WriteString("_limit")
		case r == ',':
			b.WriteByte('_')
		case r == '=' || r == '/' || r == ':':
			b.WriteByte('-')
		case r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z':
			b.WriteRune(r)
		default:
			b.WriteByte('x')
		}
	}
	return b.String()
}

// SessionCount is the number of sessions that shared the link: Sessions,
// or 1 when it is unset.
func (c Cell) SessionCount() int { return max(1, c.Sessions) }

// Title is a human label such as "80 ms / 10 Mbit", followed by the
// profile's options when it has any ("80 ms / 10 Mbit, qdisc=fq_codel",
// "80 ms / 10 Mbit, limit 200") and the matrix's own axes ("80 ms / 10
// Mbit, mtu 1200"), so cells that differ only in those are told apart.
func (c Cell) Title() string {
	if c.Profile == PathProfile {
		return "path between two hosts, as found" + c.axesTitle()
	}
	t := fmt.Sprintf("%s ms / %s Mbit", num(c.RTTms), num(c.RateMbit))
	if o := ProfileOptions(c.Profile); o != "" {
		t += ", " + o
	}
	return t + c.axesTitle()
}

// ProfileOptions is the part of a profile beyond rtt_ms:rate_mbit[:loss]
// as a reader would say it: "" for the short form, else the limit
// ("limit 200") and the options as written, comma-separated.
func ProfileOptions(profile string) string {
	i := strings.IndexAny(profile, "@,")
	if i < 0 {
		return ""
	}
	rest := profile[i:]
	var parts []string
	if strings.HasPrefix(rest, "@") {
		limit, opts, _ := strings.Cut(rest[1:], ",")
		parts = append(parts, "limit "+limit)
		rest = opts
	} else {
		rest = rest[1:]
	}
	if rest != "" {
		parts = append(parts, rest)
	}
	return strings.Join(parts, ", ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Run is everything one run (cell, arm, repeat) measured.
type Run struct {
	Schema int    `json:"schema"`
	Cell   Cell   `json:"cell"`
	Arm    string `json:"arm"` // tcp, quic, quic-per-channel, quic-priority, or any registered arm
	Repeat int    `json:"repeat"`
	// QUIC says the arm carries QUIC (measure.Arm.QUIC), so that a summary
	// made where the arm is not registered reads it as QUIC; records from
	// before the field are read by the arm's name.
	QUIC bool `json:"quic,omitempty"`

	Started  time.Time     `json:"started"`
	Finished time.Time     `json:"finished"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`

	// Failed, when set, says why the run could not be measured.
	Failed string `json:"failed,omitempty"`

	// Samples are every interactive round trip, warm-up included; their
	// offsets count from SamplesStart (the client's start, when every
	// channel had opened), which places them beside Link.Changes.
	Samples      []stats.Sample `json:"samples"`
	SamplesStart time.Time      `json:"samples_start,omitzero"`
	Timeouts     int            `json:"timeouts"`
	// ThroughputMbit is the saturating channel's goodput after warm-up.
	ThroughputMbit float64       `json:"throughput_mbit"`
	BulkBytes      int64         `json:"bulk_bytes"`
	ConnectTime    time.Duration `json:"connect_time_ns"`
	ChannelErrors  []string      `json:"channel_errors,omitempty"`

	// Link is the link as applied.
	Link Link `json:"link"`
	// GSOQueue is the bytes-per-slot check on the server's egress queue;
	// GSOCounters the check on the egress-hook counters. Nil where not
	// applicable (tcp arms) or not measured.
	GSOQueue    *gsocheck.Result `json:"gso_queue,omitempty"`
	GSOCounters *gsocheck.Result `json:"gso_counters,omitempty"`
	// QUICGSO is what quic-go's ConnectionState said, per connection.
	QUICGSO []bool `json:"quic_gso,omitempty"`
	// CongestionControl is what was read back from the sockets or stated
	// by quic-go, per connection, server and client.
	CongestionControl []string `json:"congestion_control,omitempty"`
	// TCPController names the tcp arm's controller with its settings when
	// it is one of this project's (quicreno: "quicreno iw=32 beta=0.70
	// ..."); empty for the kernel's own.
	TCPController string `json:"tcp_controller,omitempty"`

	// Server and Client are the transport's recorded state (what was in
	// force, TCP_INFO, QUIC statistics) as each end wrote it.
	Server json.RawMessage `json:"server,omitempty"`
	Client json.RawMessage `json:"client,omitempty"`
	// Host is the host state record.
	Host json.RawMessage `json:"host,omitempty"`

	// ServerUsage and ClientUsage are each process's own CPU time and peak
	// resident memory over its whole life (getrusage RUSAGE_SELF at exit),
	// and BulkBytesTotal the saturating channel's bytes over the whole run,
	// so CPU per MB delivered can be derived.
	ServerUsage    *Usage `json:"server_usage,omitempty"`
	ClientUsage    *Usage `json:"client_usage,omitempty"`
	BulkBytesTotal int64  `json:"bulk_bytes_total,omitempty"`

	// Sessions holds each session's own figures when the run carried
	// several sessions at once (Cell.Sessions set), in the order the client
	// dialled them. The top-level Samples, Timeouts, ThroughputMbit,
	// BulkBytes and ConnectTime then describe session 0, so a reader that
	// knows nothing of sessions still sees one real session rather than a
	// blend; BulkBytesTotal, which pairs with the processes' CPU time, is
	// the sum over sessions; CongestionControl and QUICGSO list every
	// session's connections. Server and Client hold session 0's transport
	// state; every session's is in the run directory's server.json and
	// client.json.
	Sessions []SessionResult `json:"sessions,omitempty"`
}

// SessionResult is what one of several concurrent sessions measured.
type SessionResult struct {
	Index int `json:"index"`
	// Samples are the session's interactive round trips, warm-up included.
	Samples  []stats.Sample `json:"samples"`
	Timeouts int            `json:"timeouts"`
	// ThroughputMbit is the session's saturating channel's goodput after
	// warm-up; BulkBytes its bytes in that window and BulkBytesTotal over
	// the whole run.
	ThroughputMbit float64       `json:"throughput_mbit"`
	BulkBytes      int64         `json:"bulk_bytes"`
	BulkBytesTotal int64         `json:"bulk_bytes_total"`
	ConnectTime    time.Duration `json:"connect_time_ns"`
	ChannelErrors  []string      `json:"channel_errors,omitempty"`
}

// StatsRepeat converts one session's figures into what stats summarises,
// carrying the run's failure if it had one.
func (s SessionResult) StatsRepeat(failed string) stats.Repeat {
	return stats.Repeat{Samples: s.Samples, Timeouts: s.Timeouts, ThroughputMbit: s.ThroughputMbit, Failed: failed}
}

// SessionResults returns the run's sessions: Sessions when recorded, else
// one session made of the run's top-level figures (a single-session run).
func (r Run) SessionResults() []SessionResult {
	if len(r.Sessions) > 0 {
		return r.Sessions
	}
	return []SessionResult{{
		Samples: r.Samples, Timeouts: r.Timeouts, ThroughputMbit: r.ThroughputMbit,
		BulkBytes: r.BulkBytes, BulkBytesTotal: r.BulkBytesTotal, ConnectTime: r.ConnectTime,
		ChannelErrors: r.ChannelErrors,
	}}
}

// Usage is one process's resource use.
type Usage struct {
	User      time.Duration `json:"user_ns"`
	System    time.Duration `json:"system_ns"`
	MaxRSSKiB int64         `json:"max_rss_kib"`
}

// CPU is user plus system time.
func (u Usage) CPU() time.Duration { return u.User + u.System }

// Link is the link as applied, as the run recorded it.
type Link struct {
	Backend string   `json:"backend"`
	Applied []string `json:"applied"`
	Limit   int      `json:"limit"`
	Seed    uint64   `json:"seed,omitempty"`
	// Offload is "keep" when the link's ends kept their segmentation
	// offloads (shapedlink.OffloadKeep: kernel TCP sent super-packets,
	// which the emulator judged per wire segment and netem whole); empty
	// for a link of wire-sized packets, the default, and for every run
	// recorded before the mode existed.
	Offload string `json:"offload,omitempty"`
	// Shaper is the userspace emulator's own account of the run (priority,
	// drops it caused, lateness against the model); nil for netem and for
	// runs recorded before it existed.
	Shaper *shapedlink.ShaperReport `json:"shaper,omitempty"`
	// ScheduleStart is when the link's schedule and trace started
	// counting, and Changes the schedule's changes that took effect
	// before the run ended, each with its time (for frames arriving from
	// then on); both empty for a link without them.
	ScheduleStart time.Time                  `json:"schedule_start,omitzero"`
	Changes       []shapedlink.AppliedChange `json:"changes,omitempty"`
	// Probe is the short probe of the path taken just before a run
	// between two hosts (Cell.Profile PathProfile); nil for an emulated
	// link.
	Probe *PathProbe `json:"probe,omitempty"`
	// Cross is each cross flow's account (the profile's cross option):
	// goodput in bins from its start, packets and retransmissions, read
	// as the run ended; empty for a link without cross traffic.
	Cross []shapedlink.CrossReport `json:"cross,omitempty"`
}

// PathProfile is the Profile of a cell measured between two hosts over
// the path as found: nothing was emulated, so the cell's RTTms, RateMbit
// and LossPct are zero and the run's Link.Probe says what the path was.
const PathProfile = "path"

// PathProbe is what a short train of UDP echoes, sent just before a run
// between two hosts, found on the path: how many were sent and answered,
// the round-trip loss (each echo crosses the path twice, so this is the
// loss of the two directions together) and the round trips of those
// answered.
type PathProbe struct {
	// Peer is the address the echoes were sent to.
	Peer     string  `json:"peer"`
	Sent     int     `json:"sent"`
	Answered int     `json:"answered"`
	LossPct  float64 `json:"loss_pct"`
	RTTMinMs float64 `json:"rtt_min_ms"`
	RTTP50Ms float64 `json:"rtt_p50_ms"`
	RTTP90Ms float64 `json:"rtt_p90_ms"`
	RTTMaxMs float64 `json:"rtt_max_ms"`
	// At is when the first echo was sent.
	At time.Time `json:"at"`
}

// StatsRepeat converts a run into what stats summarises.
func (r Run) StatsRepeat() stats.Repeat {
	return stats.Repeat{Samples: r.Samples, Timeouts: r.Timeouts, ThroughputMbit: r.ThroughputMbit, Failed: r.Failed}
}

// RunDir is the directory of one run under workdir.
func RunDir(workdir string, c Cell, arm string, repeat int) string {
	return filepath.Join(workdir, c.Dir(), arm, fmt.Sprintf("r%d", repeat))
}

// RunFile is the name of a run's record inside its directory.
const RunFile = "run.json"
