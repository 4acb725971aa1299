package spicelike

import (
	"errors"
	"fmt"
	"time"
)

// Role is what a channel does during a run.
type Role int

const (
	// Quiet channels exchange one byte each way when the run opens and then
	// stay idle until it ends, like a session's cursor or playback channel
	// most of the time.
	Quiet Role = iota
	// Saturating channels carry bulk data from the server to the client as
	// fast as the transport accepts it (or at Config.BulkRateCap), like a
	// display channel.
	Saturating
	// Interactive channels carry fixed-size requests that the server echoes
	// verbatim, one outstanding at a time, like an inputs channel. Every
	// round trip is a Sample.
	Interactive
	// Replayed channels play back a recorded session's messages
	// (Config.Replay); every channel of a replay has this role.
	Replayed
)

// String returns the lower-case role name used in results.
func (r Role) String() string {
	switch r {
	case Quiet:
		return "quiet"
	case Saturating:
		return "saturating"
	case Interactive:
		return "interactive"
	case Replayed:
		return "replayed"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// MarshalText encodes the role by name, so results read well as JSON.
func (r Role) MarshalText() ([]byte, error) {
	if r < Quiet || r > Replayed {
		return nil, fmt.Errorf("spicelike: cannot encode unknown role %d", int(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText decodes a role name written by MarshalText.
func (r *Role) UnmarshalText(b []byte) error {
	p, err := parseRole(string(b))
	if err != nil {
		return err
	}
	*r = p
	return nil
}

// parseRole returns the role named s ("quiet", "saturating",
// "interactive" or "replayed").
func parseRole(s string) (Role, error) {
	for _, r := range []Role{Quiet, Saturating, Interactive, Replayed} {
		if s == r.String() {
			return r, nil
		}
	}
	return 0, fmt.Errorf("spicelike: unknown role %q: want quiet, saturating, interactive or replayed", s)
}

// Channel names one channel of a session and the role it plays.
type Channel struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
}

// maxChannels is the most channels one session may have. The channel's index
// travels in the one-byte opener, which is how each side checks that the
// transport delivered the channels in the agreed order.
const maxChannels = 64

// defaultChannels returns the five channels of a SPICE session, in the
// order both ends must present them: main (quiet), display (saturating),
// inputs (interactive), cursor (quiet) and playback (quiet).
func defaultChannels() []Channel {
	return []Channel{
		{"main", Quiet},
		{"display", Saturating},
		{"inputs", Interactive},
		{"cursor", Quiet},
		{"playback", Quiet},
	}
}

// quietNames are SPICE channel names given to quiet channels, in order, by
// SessionChannels. main comes first and is placed before display and inputs,
// so that SessionChannels(3) equals defaultChannels().
var quietNames = [...]string{"main", "cursor", "playback", "record", "smartcard", "usbredir", "port", "webdav"}

// SessionChannels returns a session with one saturating channel (display),
// one interactive channel (inputs) and the given number of quiet channels.
// The quiet channels take SPICE's own channel names (main, cursor, playback,
// record, smartcard, usbredir, port, webdav) and then quiet8, quiet9, ...,
// up to 62 of them. SessionChannels(3) is the reference session of
// Defaults. To change which channel plays which role, edit the returned
// slice: it is plain data.
func SessionChannels(quiet int) ([]Channel, error) {
	if quiet < 0 || quiet > maxChannels-2 {
		return nil, fmt.Errorf("spicelike: %d quiet channels: want 0 to %d", quiet, maxChannels-2)
	}
	name := func(i int) string {
		if i < len(quietNames) {
			return quietNames[i]
		}
		return fmt.Sprintf("quiet%d", i)
	}
	var chans []Channel
	if quiet > 0 {
		chans = append(chans, Channel{name(0), Quiet})
	}
	chans = append(chans, Channel{"display", Saturating}, Channel{"inputs", Interactive})
	for i := 1; i < quiet; i++ {
		chans = append(chans, Channel{name(i), Quiet})
	}
	return chans, nil
}

// Config describes one run. Both ends must be given the same Channels (same
// names, roles and order), EchoSize and Duration; start from Defaults and
// change what the question needs. Validate rejects zero values where zero is
// not meaningful: there are no silent defaults.
type Config struct {
	// Channels in the order the transport presents them, at most 64. At
	// most one may be Saturating and at most one Interactive; the rest are
	// Quiet.
	Channels []Channel `json:"channels"`
	// Duration is the whole run, warm-up included, timed by the client from
	// the moment every channel has been opened. Must be > Warmup.
	Duration time.Duration `json:"duration"`
	// Warmup is the leading part of the run whose samples and bulk bytes are
	// kept but marked as warm-up (Sample.Offset < Warmup) and left out of
	// ClientResult.BulkBytesWindow and BulkMbps. Zero is allowed.
	Warmup time.Duration `json:"warmup"`
	// BulkBufferSize is the size of each write on the saturating channel,
	// and the granularity of the rate cap.
	BulkBufferSize int `json:"bulk_buffer_size"`
	// BulkRateCap, in bits per second of payload, paces the saturating
	// channel. Zero means uncapped: as fast as the transport takes it.
	BulkRateCap int64 `json:"bulk_rate_cap_bps"`
	// EchoSize is the size in bytes of each interactive request and its
	// echo, 16 to 65535 (the first 16 bytes are a header).
	EchoSize int `json:"echo_size"`
	// EchoGap is the pause after each echo before the next request. Zero is
	// allowed and means back-to-back requests.
	EchoGap time.Duration `json:"echo_gap"`
	// Timeout bounds one interactive round trip (a longer one counts as a
	// timeout and ends that channel's measurement), the opening exchange
	// and each step of the closing exchange.
	Timeout time.Duration `json:"timeout"`
	// Replay, when set, makes the run play back a recorded session instead
	// of the roles above: Channels must be Replay.ConfigChannels() (every
	// one Replayed), and the saturating, interactive and quiet settings
	// are not used. See Replay.
	Replay *Replay `json:"replay,omitempty"`
}

// Defaults returns the headline configuration: the five channels of a
// SPICE session (main, display, inputs, cursor, playback), a 45 s run
// of which the first 5 s are warm-up, 64 KiB bulk writes, no rate cap,
// 64-byte echoes with a 20 ms gap, and a 10 s timeout.
func Defaults() Config {
	return Config{
		Channels:       defaultChannels(),
		Duration:       45 * time.Second,
		Warmup:         5 * time.Second,
		BulkBufferSize: 64 << 10,
		BulkRateCap:    0,
		EchoSize:       64,
		EchoGap:        20 * time.Millisecond,
		Timeout:        10 * time.Second,
	}
}

const (
	headerSize     = 16
	maxEchoSize    = 65535
	maxBulkBufSize = 16 << 20
)

// Validate reports every problem with c at once, each saying what to change.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if len(c.Channels) == 0 {
		bad("no channels: use defaultChannels() or SessionChannels(n)")
	}
	if len(c.Channels) > maxChannels {
		bad("%d channels: at most %d are supported", len(c.Channels), maxChannels)
	}
	seen := map[string]bool{}
	var nsat, nint, nrep int
	for i, ch := range c.Channels {
		switch {
		case ch.Name == "":
			bad("channel %d has no name", i)
		case seen[ch.Name]:
			bad("channel name %q is used twice: names must be unique", ch.Name)
		}
		seen[ch.Name] = true
		switch ch.Role {
		case Quiet:
		case Saturating:
			nsat++
		case Interactive:
			nint++
		case Replayed:
			nrep++
		default:
			bad("channel %q has unknown role %d", ch.Name, int(ch.Role))
		}
	}
	if nsat > 1 {
		bad("%d saturating channels: at most one is supported (run several sessions for more load)", nsat)
	}
	if nint > 1 {
		bad("%d interactive channels: at most one is supported (run several sessions for more)", nint)
	}
	if c.Duration <= 0 {
		bad("Duration is %v: it must be positive (start from spicelike.Defaults())", c.Duration)
	}
	if c.Warmup < 0 {
		bad("Warmup is %v: it must be zero or positive", c.Warmup)
	}
	if c.Duration > 0 && c.Warmup >= c.Duration {
		bad("Warmup %v is not shorter than Duration %v: nothing would be measured", c.Warmup, c.Duration)
	}
	if c.BulkBufferSize <= 0 || c.BulkBufferSize > maxBulkBufSize {
		bad("BulkBufferSize is %d: want 1 to %d bytes (the default is 65536)", c.BulkBufferSize, maxBulkBufSize)
	}
	if c.BulkRateCap < 0 {
		bad("BulkRateCap is %d bit/s: want 0 (uncapped) or a positive rate", c.BulkRateCap)
	}
	if c.EchoSize < headerSize || c.EchoSize > maxEchoSize {
		bad("EchoSize is %d: want %d to %d bytes (the default is 64)", c.EchoSize, headerSize, maxEchoSize)
	}
	if c.EchoGap < 0 {
		bad("EchoGap is %v: want zero (back-to-back) or positive", c.EchoGap)
	}
	if c.Timeout <= 0 {
		bad("Timeout is %v: it must be positive (the default is 10s)", c.Timeout)
	}
	switch {
	case c.Replay != nil:
		if err := c.Replay.checkConfig(c.Channels); err != nil {
			errs = append(errs, err)
		}
	case nrep > 0:
		bad("%d channels are replayed but there is no Replay to play: set Config.Replay, or give the channels another role", nrep)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("spicelike: invalid config: %w", errors.Join(errs...))
}
