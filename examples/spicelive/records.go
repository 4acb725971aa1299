package main

import (
	"errors"
	"time"

	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// Trace and screenshot files in a live run's directory.
const (
	clientTrace = "client-trace.jsonl"
	serverTrace = "server-trace.jsonl"
	screenshot  = "screenshot.png"
)

// liveFile is a live run's own record beside its run.json.
const liveFile = "live.json"

// liveRecord is what a live run adds to its run.json, in live.json.
type liveRecord struct {
	Analysis Analysis      `json:"analysis"`
	Server   *serverResult `json:"server,omitempty"`
	Client   *clientResult `json:"client,omitempty"`
}

// serverResult is what the server role reports.
type serverResult struct {
	Display  string                     `json:"display,omitempty"`
	Typing   spicetrace.Rect            `json:"typing"`
	Busy     spicetrace.Rect            `json:"busy"`
	Channels []spicetunnel.ChannelStats `json:"channels,omitempty"`
	State    *transport.State           `json:"state,omitempty"`
}

// clientResult is what the client role reports.
type clientResult struct {
	// TypingStart and TypingEnd are the typing period in the client
	// trace's time; Keys counts the keys xdotool sent.
	TypingStart time.Duration `json:"typing_start_ns"`
	TypingEnd   time.Duration `json:"typing_end_ns"`
	Keys        int           `json:"keys"`
	// SessionUp is how long spicy took from its start to the first draw
	// with the inputs channel linked.
	SessionUp  time.Duration              `json:"session_up_ns"`
	Screenshot string                     `json:"screenshot,omitempty"`
	Channels   []spicetunnel.ChannelStats `json:"channels,omitempty"`
	State      *transport.State           `json:"state,omitempty"`
}

// errRunsFailed says some runs failed and were recorded so.
var errRunsFailed = errors.New("runs failed")

// settingsFile records what a work directory was made for.
const settingsFile = "spicelive.json"
