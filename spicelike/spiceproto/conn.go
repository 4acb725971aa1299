package spiceproto

import (
	"errors"
	"fmt"
	"sync"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Names of the link stage's parts (Msg.Name when Msg.Stage is
// spicetrace.StageLink).
const (
	nameLinkMess      = "link_mess"
	nameLinkReply     = "link_reply"
	nameAuthMechanism = "auth_mechanism"
	nameTicket        = "ticket"
	nameLinkResult    = "link_result"
)

// Msg is one complete protocol message (or one part of the link stage) as
// it passed on a connection.
type Msg struct {
	Dir Direction
	// Stage is spicetrace.StageLink for the parts of the link stage, else
	// spicetrace.StageData.
	Stage spicetrace.Stage
	// Name is the link stage part's name, or the data message's name where
	// this package knows it ("" otherwise).
	Name string
	// Type is the data message's type; 0 in the link stage.
	Type MsgType
	// Size is the message's bytes on the wire, its header included.
	Size int
	// Draw is set for display messages that draw (see Draw).
	Draw *Draw
	// Key is set for the inputs channel's key messages.
	Key *Key
}

// Rect is a SPICE rectangle: Top and Left inclusive, Bottom and Right
// exclusive.
type Rect struct {
	Top, Left, Bottom, Right int32
}

// Draw is what a display message draws: the drawing operations and
// copy_bits (their SpiceMsgDisplayBase's surface and box), and video
// stream frames (the stream's destination on its surface).
type Draw struct {
	Surface uint32
	// Primary is set when Surface is the primary surface (the screen): the
	// surface last created with the primary flag, or surface 0 before any
	// was seen.
	Primary bool
	Box     Rect
	// Stream is set for a stream frame (stream_data, stream_data_sized).
	Stream bool
}

// Key is a key message on the inputs channel.
type Key struct {
	// Code is key_down's or key_up's code, or for key_scancode the first
	// scancode (with a 0xe0 prefix byte folded in as 0xe0XX).
	Code uint32
	// Down is set for a press: key_down, or a key_scancode whose first
	// scancode has the release bit (0x80) clear.
	Down bool
}

// keepBody is how much of a data message's body is kept for decoding:
// every field this package reads lies in the first 64 bytes.
const keepBody = 64

// maxMessage bounds one data message: spice-server's largest messages are
// uncompressed images of a whole screen, far below this.
const maxMessage = 256 << 20

// maxHeld bounds the client bytes a Conn holds between the link message and
// the server's reply (see Feed). A client sends at most its authentication
// mechanism and ticket (132 bytes) before it has read the reply.
const maxHeld = 64 << 10

// maxStreams bounds the video streams a display channel may have live at
// once (created and not yet destroyed). spice-server numbers its streams
// from a table of 50.
const maxStreams = 256

type step int

const (
	stLinkHeader step = iota
	stLinkBody
	stWaitReply // client to server: the next part depends on the server's reply
	stAuthMechanism
	stTicket
	stLinkResult
	stDataHeader
	stDataBody
	stClosed // the server refused the link: nothing more may come
)

// dirState is one direction's parser.
type dirState struct {
	step step
	want int    // bytes of the current fixed-size part
	buf  []byte // what has been read of it (for a data body: its first keepBody bytes)
	// data body being read
	msgType   MsgType
	msgSize   int // header + body
	remaining int
	pending   []byte // client bytes that arrived while waiting for the reply
}

// Conn follows one SPICE connection (one channel) in both directions, fed
// the bytes as they pass, and returns each message once its last byte has
// been fed. It is safe for concurrent use: a tunnel feeds each direction
// from its own goroutine.
type Conn struct {
	mu   sync.Mutex
	dirs [2]dirState
	err  *FeedError // set once the connection cannot be followed

	mess    *LinkMess
	reply   *LinkReply
	mini    bool
	streams map[uint32]streamInfo
	primary uint32
}

type streamInfo struct {
	surface uint32
	dest    Rect
}

// NewConn returns a parser for a connection whose first bytes have not
// been fed yet.
func NewConn() *Conn {
	c := &Conn{streams: map[uint32]streamInfo{}}
	for i := range c.dirs {
		c.dirs[i] = dirState{step: stLinkHeader, want: LinkHeaderSize}
	}
	return c
}

// Channel returns the channel type and id from the link message, once it
// has been fed.
func (c *Conn) Channel() (ChannelType, uint8, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mess == nil {
		return 0, 0, false
	}
	return c.mess.ChannelType, c.mess.ChannelID, true
}

// MiniHeader reports whether the data messages use the mini header: both
// ends announced CapMiniHeader. It is meaningful once both the link
// message and the reply have been fed.
func (c *Conn) MiniHeader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mini
}

// ErrNotSpice wraps the errors that say the bytes are not a SPICE
// connection this parser can follow.
var ErrNotSpice = errors.New("spiceproto: cannot follow the connection")

// FeedError is the error Feed returns once a connection cannot be followed.
// It wraps ErrNotSpice and Err.
type FeedError struct {
	// Dir is the direction whose bytes could not be followed. It may differ
	// from the direction of the Feed that returned the error: client bytes
	// held until the server's reply are parsed by the Feed of the reply.
	Dir Direction
	// Err says what was wrong with them.
	Err error
}

func (e *FeedError) Error() string {
	return fmt.Sprintf("%v: the %s's bytes (%v): %v", ErrNotSpice, dirPeer(e.Dir), e.Dir, e.Err)
}

// Unwrap returns ErrNotSpice and Err.
func (e *FeedError) Unwrap() []error { return []error{ErrNotSpice, e.Err} }

// Feed takes the next bytes of direction dir and returns the messages they
// complete, in order. Where the bytes are cut into Feeds changes neither
// the messages nor the error, for the same order of the two directions.
//
// Bytes the client sends after its link message, before the server's
// reply has been fed, are held, and parsed as soon as the reply's last
// byte is; their messages follow the reply's. More than 64 KiB held is an
// error. The first error (a *FeedError) ends the parsing of the
// connection: that Feed returns the messages completed before the bad
// bytes and the error, and every later Feed of either direction returns
// no messages and the same error.
func (c *Conn) Feed(dir Direction, b []byte) ([]Msg, error) {
	if dir != ClientToServer && dir != ServerToClient {
		return nil, fmt.Errorf("spiceproto: Feed with direction %d", dir)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	out, err := c.consume(dir, b, nil)
	if err != nil {
		c.err = err
		return out, err
	}
	return out, nil
}

// consume parses b as the next bytes of direction dir, appending the
// messages completed to out.
func (c *Conn) consume(dir Direction, b []byte, out []Msg) ([]Msg, *FeedError) {
	d := &c.dirs[dir]
	fail := func(err error) *FeedError { return &FeedError{Dir: dir, Err: err} }
	for len(b) > 0 {
		switch d.step {
		case stWaitReply:
			if len(d.pending)+len(b) > maxHeld {
				return out, fail(fmt.Errorf("more than %d bytes after the link message before the server's reply was fed; a client waits for the reply (feed each direction's bytes as they pass)", maxHeld))
			}
			d.pending = append(d.pending, b...)
			return out, nil
		case stClosed:
			return out, fail(errors.New("bytes after the server refused the link"))
		case stDataBody:
			n := min(len(b), d.remaining)
			if keep := keepBody - len(d.buf); keep > 0 {
				d.buf = append(d.buf, b[:min(n, keep)]...)
			}
			d.remaining -= n
			b = b[n:]
			if d.remaining == 0 {
				m, err := c.finishData(dir)
				if err != nil {
					return out, fail(err)
				}
				out = append(out, m)
				d.expect(stDataHeader, c.headerSize())
			}
			continue
		}
		n := min(len(b), d.want-len(d.buf))
		d.buf = append(d.buf, b[:n]...)
		b = b[n:]
		if len(d.buf) < d.want {
			break
		}
		m, err := c.complete(dir)
		if err != nil {
			return out, fail(err)
		}
		if m != nil {
			out = append(out, *m)
		}
		if cs := &c.dirs[ClientToServer]; m != nil && m.Name == nameLinkReply && cs.step == stWaitReply {
			// The reply decides how the held client bytes read: parse them
			// now, before the server's next bytes.
			c.afterReply()
			held := cs.pending
			cs.pending = nil
			var ferr *FeedError
			if out, ferr = c.consume(ClientToServer, held, out); ferr != nil {
				return out, ferr
			}
		}
	}
	return out, nil
}

func dirPeer(d Direction) string {
	if d == ClientToServer {
		return "client"
	}
	return "server"
}

func (d *dirState) expect(s step, n int) {
	d.step, d.want, d.buf = s, n, d.buf[:0]
}

func (c *Conn) headerSize() int {
	if c.mini {
		return miniHeaderSize
	}
	return fullHeaderSize
}

// complete handles a fixed-size part that has been read whole.
func (c *Conn) complete(dir Direction) (*Msg, error) {
	d := &c.dirs[dir]
	link := func(name string, size int) *Msg {
		return &Msg{Dir: dir, Stage: spicetrace.StageLink, Name: name, Size: size}
	}
	switch d.step {
	case stLinkHeader:
		h, err := ParseLinkHeader(d.buf)
		if err != nil {
			return nil, err
		}
		if h.Size == 0 {
			return nil, errors.New("link header announces an empty link message")
		}
		d.expect(stLinkBody, int(h.Size))
		return nil, nil
	case stLinkBody:
		return c.linkBody(dir)
	case stAuthMechanism:
		switch mech := Cap(le.Uint32(d.buf)); mech {
		case CapAuthSpice:
			d.expect(stTicket, TicketSize)
		case CapAuthSASL:
			return nil, errors.New("the client chose SASL authentication, which this parser does not follow: give spice-server a ticket (password) instead")
		default:
			return nil, fmt.Errorf("the client chose authentication mechanism %d, which SPICE does not define", mech)
		}
		return link(nameAuthMechanism, authMechanismSize), nil
	case stTicket:
		d.expect(stDataHeader, c.headerSize())
		return link(nameTicket, TicketSize), nil
	case stLinkResult:
		if LinkErr(le.Uint32(d.buf)) != LinkErrOK {
			d.expect(stClosed, 0)
		} else {
			d.expect(stDataHeader, c.headerSize())
		}
		return link(nameLinkResult, linkResultSize), nil
	case stDataHeader:
		return c.dataHeader(dir)
	}
	return nil, fmt.Errorf("parser in step %d with a complete part", d.step)
}

func (c *Conn) linkBody(dir Direction) (*Msg, error) {
	d := &c.dirs[dir]
	size := LinkHeaderSize + len(d.buf)
	if dir == ClientToServer {
		m, err := ParseLinkMess(d.buf)
		if err != nil {
			return nil, err
		}
		c.mess = &m
		d.expect(stWaitReply, 0)
		if c.reply != nil {
			c.afterReply()
		}
		return &Msg{Dir: dir, Stage: spicetrace.StageLink, Name: nameLinkMess, Size: size}, nil
	}
	r, err := parseLinkReply(d.buf)
	if err != nil {
		return nil, err
	}
	c.reply = &r
	if r.Error != LinkErrOK {
		d.expect(stClosed, 0)
	} else {
		d.expect(stLinkResult, linkResultSize)
	}
	if c.mess != nil {
		c.mini = HasCap(c.mess.CommonCaps, CapMiniHeader) && HasCap(r.CommonCaps, CapMiniHeader)
	}
	return &Msg{Dir: dir, Stage: spicetrace.StageLink, Name: nameLinkReply, Size: size}, nil
}

// afterReply sets what the client sends after the reply: the mechanism it
// chose when the server offers a choice (as spice-gtk decides), else the
// ticket straight away. A refused link ends the client's side too.
func (c *Conn) afterReply() {
	cs := &c.dirs[ClientToServer]
	if c.mess != nil {
		c.mini = HasCap(c.mess.CommonCaps, CapMiniHeader) && HasCap(c.reply.CommonCaps, CapMiniHeader)
	}
	switch {
	case c.reply.Error != LinkErrOK:
		cs.expect(stClosed, 0)
	case HasCap(c.reply.CommonCaps, CapProtocolAuthSelection):
		cs.expect(stAuthMechanism, authMechanismSize)
	default:
		cs.expect(stTicket, TicketSize)
	}
}

func (c *Conn) dataHeader(dir Direction) (*Msg, error) {
	d := &c.dirs[dir]
	var typ MsgType
	var size uint32
	if c.mini {
		typ, size = MsgType(le.Uint16(d.buf)), le.Uint32(d.buf[2:])
	} else {
		typ, size = MsgType(le.Uint16(d.buf[8:])), le.Uint32(d.buf[10:])
	}
	if size > maxMessage {
		return nil, fmt.Errorf("data message of type %d announces %d bytes; more than %d is not SPICE (is the mini-header agreement right?)", typ, size, maxMessage)
	}
	d.msgType, d.msgSize, d.remaining = typ, len(d.buf)+int(size), int(size)
	d.buf = d.buf[:0]
	if size == 0 {
		m, err := c.finishData(dir)
		if err != nil {
			return nil, err
		}
		d.expect(stDataHeader, c.headerSize())
		return &m, nil
	}
	d.step = stDataBody
	return nil, nil
}

// finishData makes the Msg of the data message just read.
func (c *Conn) finishData(dir Direction) (Msg, error) {
	d := &c.dirs[dir]
	var ch ChannelType
	if c.mess != nil {
		ch = c.mess.ChannelType
	}
	m := Msg{Dir: dir, Stage: spicetrace.StageData, Type: d.msgType, Size: d.msgSize, Name: MessageName(ch, dir, d.msgType)}
	switch {
	case ch == ChannelDisplay && dir == ServerToClient:
		var err error
		if m.Draw, err = c.decodeDisplay(d.msgType, d.buf); err != nil {
			return Msg{}, err
		}
	case ch == ChannelInputs && dir == ClientToServer:
		m.Key = decodeKey(d.msgType, d.buf)
	}
	return m, nil
}
