package spicetrace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// format is the header's format name for this version of the format.
const format = "quicbench.spicetrace/1"

// Direction is which way a message went.
type Direction string

const (
	// ClientToServer is a message the SPICE client sent.
	ClientToServer Direction = "c2s"
	// ServerToClient is a message spice-server sent.
	ServerToClient Direction = "s2c"
)

// Stage is the part of a SPICE connection a message belongs to.
type Stage string

const (
	// StageLink is the link stage: link message, reply, authentication
	// mechanism, ticket and link result.
	StageLink Stage = "link"
	// StageData is every message after the link stage.
	StageData Stage = "data"
)

// Sides: which end of a tunnel wrote a trace.
const (
	SideClient = "client"
	SideServer = "server"
)

// Header is a trace's first line.
type Header struct {
	// Format is the format's name and version, "quicbench.spicetrace/1":
	// NewWriter sets it and Read checks it.
	Format string `json:"format"`
	// Side is the tunnel end that wrote the trace: SideClient or SideServer.
	Side string `json:"side"`
	// Started is the wall-clock time of t = 0.
	Started time.Time `json:"started"`
	// Note is free text (the arm, the link), for people.
	Note string `json:"note,omitempty"`
}

// Rect is a box in surface coordinates: Top and Left inclusive, Bottom and
// Right exclusive, as SPICE's own rectangles.
type Rect struct {
	Top    int32 `json:"top"`
	Left   int32 `json:"left"`
	Bottom int32 `json:"bottom"`
	Right  int32 `json:"right"`
}

// Empty reports whether r covers no pixel.
func (r Rect) Empty() bool { return r.Right <= r.Left || r.Bottom <= r.Top }

// Intersects reports whether r and s share at least one pixel.
func (r Rect) Intersects(s Rect) bool {
	return !r.Empty() && !s.Empty() && r.Left < s.Right && s.Left < r.Right && r.Top < s.Bottom && s.Top < r.Bottom
}

// Draw is what a display message draws.
type Draw struct {
	Surface uint32 `json:"surface"`
	// Primary is set when Surface is the primary surface (the screen).
	Primary bool `json:"primary"`
	Box     Rect `json:"box"`
	// Stream is set for a video stream's frame; Box is then the stream's
	// destination.
	Stream bool `json:"stream,omitempty"`
}

// Key is an inputs channel's key message.
type Key struct {
	Code uint32 `json:"code"`
	// Down is set for a key press.
	Down bool `json:"down"`
}

// Record is one message.
type Record struct {
	// T is when the message's last byte was read, since Header.Started.
	T           time.Duration `json:"t_ns"`
	Dir         Direction     `json:"dir"`
	Channel     int           `json:"ch"`
	ChannelType string        `json:"chtype,omitempty"`
	ChannelID   int           `json:"chid,omitempty"`
	Stage       Stage         `json:"stage"`
	Type        int           `json:"type"`
	Name        string        `json:"name,omitempty"`
	Size        int           `json:"size"`
	Draw        *Draw         `json:"draw,omitempty"`
	Key         *Key          `json:"key,omitempty"`
	Tag         string        `json:"tag,omitempty"`
	// Carrier is the tunnel's carrier id (16 hex digits), which tells
	// apart channels of different carriers that share an index.
	Carrier string `json:"carrier,omitempty"`
	// WriteWait is how long the tunnel end had spent, before reading this
	// message, writing its direction's earlier bytes onward: a relay that
	// reads only after its last write, so time spent blocked in writes is
	// time the sender's bytes waited unread.
	WriteWait time.Duration `json:"write_wait_ns,omitempty"`
}

// Trace is a whole trace as read.
type Trace struct {
	Header  Header
	Records []Record
}

// Writer writes a trace. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

// NewWriter writes h as the first line of w and returns a Writer for the
// records. h.Format is filled in; h.Side must be SideClient or SideServer.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.Side != SideClient && h.Side != SideServer {
		return nil, fmt.Errorf("spicetrace: header side %q: want %q or %q", h.Side, SideClient, SideServer)
	}
	if h.Started.IsZero() {
		return nil, errors.New("spicetrace: header has no start time: set Header.Started to the wall-clock time of t = 0")
	}
	h.Format = format
	tw := &Writer{w: bufio.NewWriterSize(w, 64<<10)}
	if err := tw.line(h); err != nil {
		return nil, err
	}
	return tw, nil
}

func (t *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = t.w.Write(b)
	return err
}

// Write appends r. The first error sticks: later writes return it.
func (t *Writer) Write(r Record) error {
	if err := r.validate(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.line(r)
	}
	return t.err
}

// Flush writes out what is buffered.
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}

func (r Record) validate() error {
	switch {
	case r.Dir != ClientToServer && r.Dir != ServerToClient:
		return fmt.Errorf("spicetrace: record direction %q: want %q or %q", r.Dir, ClientToServer, ServerToClient)
	case r.Stage != StageLink && r.Stage != StageData:
		return fmt.Errorf("spicetrace: record stage %q: want %q or %q", r.Stage, StageLink, StageData)
	case r.Size < 0:
		return fmt.Errorf("spicetrace: record size %d is negative", r.Size)
	case r.Channel < 0:
		return fmt.Errorf("spicetrace: record channel %d is negative", r.Channel)
	case r.T < 0:
		return fmt.Errorf("spicetrace: record time %v is before the trace's start", r.T)
	}
	return nil
}

// maxLine bounds one line of a trace: records are small, so a longer line
// is not a trace.
const maxLine = 1 << 20

// Read reads a whole trace. Records keep the file's order (concurrent
// writers may leave neighbouring times slightly out of order).
func Read(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	t := &Trace{}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line == 1 {
			if err := json.Unmarshal(b, &t.Header); err != nil {
				return nil, fmt.Errorf("spicetrace: line 1 is not a trace header: %w", err)
			}
			if t.Header.Format != format {
				return nil, fmt.Errorf("spicetrace: line 1 says format %q, want %q: is this a trace written by quicbench's SPICE tunnel?", t.Header.Format, format)
			}
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("spicetrace: line %d: %w", line, err)
		}
		if err := rec.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		t.Records = append(t.Records, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("spicetrace: after line %d: %w", line, err)
	}
	if line == 0 {
		return nil, errors.New("spicetrace: empty input: a trace starts with its header line")
	}
	return t, nil
}

// ChannelInfo describes one tunnel connection of a trace.
type ChannelInfo struct {
	Channel     int    `json:"ch"`
	ChannelType string `json:"chtype"`
	ChannelID   int    `json:"chid"`
	// Messages and Bytes count each direction's records and their sizes.
	Messages map[Direction]int `json:"messages"`
	Bytes    map[Direction]int `json:"bytes"`
}

// Channels lists the trace's connections in index order, with their SPICE
// channel type (from the first record that names it) and what each
// direction carried.
func (t *Trace) Channels() []ChannelInfo {
	byIndex := map[int]*ChannelInfo{}
	for _, r := range t.Records {
		c := byIndex[r.Channel]
		if c == nil {
			c = &ChannelInfo{Channel: r.Channel, Messages: map[Direction]int{}, Bytes: map[Direction]int{}}
			byIndex[r.Channel] = c
		}
		if c.ChannelType == "" && r.ChannelType != "" {
			c.ChannelType, c.ChannelID = r.ChannelType, r.ChannelID
		}
		c.Messages[r.Dir]++
		c.Bytes[r.Dir] += r.Size
	}
	out := make([]ChannelInfo, 0, len(byIndex))
	for _, c := range byIndex {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ChannelInfo) int { return a.Channel - b.Channel })
	return out
}
