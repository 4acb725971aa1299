package spicelike

import (
	"errors"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/stats"
)

// Sample is one interactive round trip: when its request was written,
// counted from ClientResult.Start (Offset), and how long the echo took to
// come back (RTT). It is the stats package's type, so that what the
// workload records is what the statistics take, with no conversion.
type Sample = stats.Sample

// ChannelError is a problem on one channel. Phase says when it happened:
// "open" (the one-byte opening exchange), "run" or "end" (the closing
// exchange). Channel is "*" (and Role meaningless) when the problem is the
// whole session's, such as channels that could not be interrupted.
type ChannelError struct {
	Channel string `json:"channel"`
	Role    Role   `json:"role"`
	Phase   string `json:"phase"`
	Err     string `json:"error"`
}

func (e ChannelError) Error() string {
	return fmt.Sprintf("channel %s (%s), %s: %s", e.Channel, e.Role, e.Phase, e.Err)
}

// ClientResult is what the client measured. It holds everything the
// statistics need and nothing they must derive from elsewhere: every sample
// with its offset (warm-up samples included, see Measured), every timeout,
// and the bulk byte counts with their window.
type ClientResult struct {
	Channels []Channel `json:"channels"`
	// Start is when every channel had completed its opening exchange and the
	// run began; End is when the run stopped (Start+Duration unless the
	// context was cancelled).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// OpenTime is how long the opening exchange took, all channels in
	// parallel: about one round trip on a healthy transport.
	OpenTime time.Duration `json:"open_time"`
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`

	EchoSize int           `json:"echo_size"`
	EchoGap  time.Duration `json:"echo_gap"`
	Timeout  time.Duration `json:"timeout"`
	// Samples are all completed round trips in order, warm-up included.
	Samples []Sample `json:"samples"`
	// Timeouts counts round trips that took longer than Timeout. A timeout
	// ends the interactive channel's measurement, so it is at most 1 per
	// run; TimeoutOffsets says when the timed-out request was sent.
	Timeouts       int             `json:"timeouts"`
	TimeoutOffsets []time.Duration `json:"timeout_offsets,omitempty"`

	BulkBufferSize int   `json:"bulk_buffer_size"`
	BulkRateCap    int64 `json:"bulk_rate_cap_bps"`
	// BulkBytesTotal is every bulk byte read between Start and End.
	// BulkBytesWindow is the part read from Start+Warmup to End, over
	// BulkWindow, and BulkMbps is that rate in 10^6 bit/s. BulkBytesDrained
	// were read after End while the run was closing and count in neither.
	BulkBytesTotal   int64         `json:"bulk_bytes_total"`
	BulkBytesWindow  int64         `json:"bulk_bytes_window"`
	BulkBytesDrained int64         `json:"bulk_bytes_drained"`
	BulkWindow       time.Duration `json:"bulk_window"`
	BulkMbps         float64       `json:"bulk_mbps"`

	// Errors lists every channel that failed. A run with errors still
	// returns what it measured.
	Errors []ChannelError `json:"errors,omitempty"`
	// Cancelled is set when the context ended the run early.
	Cancelled bool `json:"cancelled,omitempty"`
	// Replay is how the client played its half of a replay (Config.Replay).
	// Samples are then key-to-echo times, Timeouts the keys whose echo
	// came later than Timeout or not at all, and the bulk figures count
	// every byte the server sent, on all channels.
	Replay *ReplayStats `json:"replay,omitempty"`
}

// Measured returns the samples sent at or after the end of the warm-up,
// the ones the statistics should use.
func (r ClientResult) Measured() []Sample {
	for i, s := range r.Samples {
		if s.Offset >= r.Warmup {
			return r.Samples[i:]
		}
	}
	return nil
}

// Err joins the channel errors, or returns nil if there were none. A
// timeout is a measurement, not an error, and is not included.
func (r ClientResult) Err() error { return joinChannelErrors(r.Errors) }

// ServerResult is what the server saw. It is mostly for diagnosis: the
// client's result is the measurement.
type ServerResult struct {
	Channels []Channel `json:"channels"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	// Opened counts channels whose opening exchange completed.
	Opened int `json:"opened"`
	// Ended counts channels the client closed with the closing exchange.
	Ended            int            `json:"ended"`
	BulkBytesWritten int64          `json:"bulk_bytes_written"`
	Echoes           int64          `json:"echoes"`
	Errors           []ChannelError `json:"errors,omitempty"`
	Cancelled        bool           `json:"cancelled,omitempty"`
	// Replay is how the server played its half of a replay.
	Replay *ReplayStats `json:"replay,omitempty"`
}

// Err joins the channel errors, or returns nil if there were none.
func (r ServerResult) Err() error { return joinChannelErrors(r.Errors) }

func joinChannelErrors(ce []ChannelError) error {
	if len(ce) == 0 {
		return nil
	}
	errs := make([]error, len(ce))
	for i, e := range ce {
		errs[i] = e
	}
	return errors.Join(errs...)
}
