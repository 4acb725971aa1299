package spicelike

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Replay is a recorded session's traffic to play back over the run's
// channels: every message's size and time, per channel and direction, and
// which client messages are key presses and which server message answers
// each (the first draw of the typed-into area after it). Build one from a
// SPICE tunnel's traces with ReplayFromTraces.
//
// A scheduled message leaves at its recorded time from the start of the
// run (the recording loops every Span), after the earlier messages of its
// channel and direction, and its lateness is reported; a key's echo leaves
// the server its recorded delay after the key arrived there. Nothing
// adapts as spice-server does (docs/spice-live.md, "Recorded sessions").
type Replay struct {
	// Source says where the recording came from, for people.
	Source string `json:"source,omitempty"`
	// Span is the recording's length; a run longer than Span plays it
	// again from the start.
	Span time.Duration `json:"span_ns"`
	// Keys is how many key presses one Span holds, numbered 0..Keys-1.
	Keys     int             `json:"keys"`
	Channels []ReplayChannel `json:"channels"`
}

// ReplayChannel is one channel's messages in both directions.
type ReplayChannel struct {
	Name     string          `json:"name"`
	Messages []ReplayMessage `json:"messages"`
}

// ReplayKind is what a replayed message is to the run.
type ReplayKind string

// The kinds of replayed message.
const (
	// KindScheduled leaves at At from the start of each Span.
	KindScheduled ReplayKind = ""
	// KindKey is a client message that is a key press: scheduled like any
	// other, and the start of a key-to-echo sample.
	KindKey ReplayKind = "key"
	// KindEcho is a server message that answers key Key: it leaves At
	// after the key arrived at the server, and its arrival at the client
	// ends the sample.
	KindEcho ReplayKind = "echo"
)

// ReplayMessage is one recorded message.
type ReplayMessage struct {
	// At is from the start of the Span (scheduled and key messages) or
	// from the key's arrival at the server (echoes).
	At time.Duration `json:"t"`
	// ToClient is set for the server's messages.
	ToClient bool `json:"s2c,omitempty"`
	// Size is the message's bytes on the wire, as recorded. A message
	// shorter than a replay frame's 9-byte header is sent as a whole
	// header.
	Size int        `json:"n"`
	Kind ReplayKind `json:"kind,omitempty"`
	// Key is the key's number for KindKey and KindEcho.
	Key int `json:"key,omitempty"`
}

// replayFrameHeader is the size of a replay frame's header, the least a
// replayed message takes on the wire:
//
//	[0]    kind: 'D' scheduled data, 'K' key, 'E' echo, 'Z' end of the run
//	[1:5]  the frame's whole size, big-endian
//	[5:9]  the key's number, counted over the whole run, for 'K' and 'E'
//	[9:]   filler up to the recorded size
const replayFrameHeader = 9

// maxReplayMessage bounds one replayed message.
const maxReplayMessage = 16 << 20

const (
	frameData = 'D'
	frameKey  = 'K'
	frameEcho = 'E'
	frameEnd  = 'Z'
)

// ConfigChannels are the Config.Channels a run of r needs: its channels'
// names, in order, all Replayed.
func (r *Replay) ConfigChannels() []Channel {
	out := make([]Channel, len(r.Channels))
	for i, c := range r.Channels {
		out[i] = Channel{Name: c.Name, Role: Replayed}
	}
	return out
}

// Validate reports every problem with r at once.
func (r *Replay) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if r.Span <= 0 {
		bad("Span is %v: a recording must last", r.Span)
	}
	if r.Keys < 0 {
		bad("Keys is %d", r.Keys)
	}
	if len(r.Channels) == 0 || len(r.Channels) > maxChannels {
		bad("%d channels: want 1 to %d", len(r.Channels), maxChannels)
	}
	keys := make([]int, max(r.Keys, 0))
	names := map[string]bool{}
	for _, c := range r.Channels {
		if c.Name == "" || names[c.Name] {
			bad("channel name %q is empty or used twice", c.Name)
		}
		names[c.Name] = true
		var last [2]time.Duration
		for i, m := range c.Messages {
			where := fmt.Sprintf("channel %s message %d", c.Name, i)
			switch {
			case m.Size <= 0 || m.Size > maxReplayMessage:
				bad("%s: size %d, want 1 to %d", where, m.Size, maxReplayMessage)
			case m.At < 0 || m.Kind != KindEcho && m.At >= r.Span:
				bad("%s: at %v, outside the span %v", where, m.At, r.Span)
			case m.Kind != KindScheduled && m.Kind != KindKey && m.Kind != KindEcho:
				bad("%s: kind %q, want %q, %q or %q", where, m.Kind, KindScheduled, KindKey, KindEcho)
			case m.Kind != KindScheduled && (m.Key < 0 || m.Key >= r.Keys):
				bad("%s: key %d, want 0 to %d", where, m.Key, r.Keys-1)
			case m.Kind == KindKey && m.ToClient, m.Kind == KindEcho && !m.ToClient:
				bad("%s: a %s goes the wrong way (keys go to the server, echoes to the client)", where, m.Kind)
			case m.Kind == KindKey:
				keys[m.Key]++
			}
			if m.Kind != KindEcho {
				d := 0
				if m.ToClient {
					d = 1
				}
				if m.At < last[d] {
					bad("%s: at %v, before the previous message the same way (%v): keep each direction in time order", where, m.At, last[d])
				}
				last[d] = m.At
			}
		}
	}
	for k, n := range keys {
		if n != 1 {
			bad("key %d is pressed %d times: want exactly once", k, n)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("spicelike: invalid replay: %w", errors.Join(errs...))
}

// checkConfig is Config.Validate's part for a replay.
func (r *Replay) checkConfig(chans []Channel) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if want := r.ConfigChannels(); !slices.Equal(chans, want) {
		return fmt.Errorf("the channels %v do not match the replay's %v: use Replay.ConfigChannels()", chans, want)
	}
	return nil
}

func putFrame(b []byte, kind byte, key uint32) {
	b[0] = kind
	binary.BigEndian.PutUint32(b[1:5], uint32(len(b)))
	binary.BigEndian.PutUint32(b[5:9], key)
}

func frameSize(n int) int { return max(n, replayFrameHeader) }
