package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Channel is one of a session's channels: a reliable, ordered byte stream in
// both directions. Session.Channels returns them as io.ReadWriteCloser; each
// also implements Channel.
type Channel interface {
	io.ReadWriteCloser
	// Index is the channel's position in the session, 0..N-1, the same on
	// both ends.
	Index() int
	// CloseWrite ends the sending direction after the data already written
	// (TCP FIN, QUIC STREAM FIN); the peer reads io.EOF. Reading goes on.
	CloseWrite() error
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// ChannelError says which arm, end, channel and step failed.
type ChannelError struct {
	Arm  Arm
	Role string // "server" or "client"
	// Channel is the channel index, or -1 when the step concerns the whole
	// session or connection.
	Channel int
	Step    string
	Err     error
}

func (e *ChannelError) Error() string {
	if e.Channel < 0 {
		return fmt.Sprintf("transport: %s %s: %s: %v", e.Arm, e.Role, e.Step, e.Err)
	}
	return fmt.Sprintf("transport: %s %s: channel %d: %s: %v", e.Arm, e.Role, e.Channel, e.Step, e.Err)
}

func (e *ChannelError) Unwrap() error { return e.Err }

func chanErr(arm Arm, role string, ch int, step string, err error) error {
	return &ChannelError{Arm: arm, Role: role, Channel: ch, Step: step, Err: err}
}

// Session is one end of N channels between a client and a server.
type Session struct {
	arm         Arm
	role        string
	opts        Options
	started     time.Time
	connectTime time.Duration
	hostCC      string
	channels    []Channel
	tcp         []*tcpConn
	quic        []*quicConn
	priority    *PriorityState
	closers     []func() error

	stopSampling context.CancelFunc
	samplingDone chan struct{}
	closeOnce    sync.Once
	closeErr     error
}

// Arm returns the session's arm: ArmQUICPriority for a QUIC session with
// Options.Priority set, however it was asked for, since that is what the
// arm is.
func (s *Session) Arm() Arm {
	if s.arm == ArmQUIC && s.opts.Priority {
		return ArmQUICPriority
	}
	return s.arm
}

// Channels returns the channels in index order; each is also a Channel.
func (s *Session) Channels() []io.ReadWriteCloser {
	out := make([]io.ReadWriteCloser, len(s.channels))
	for i, c := range s.channels {
		out[i] = c
	}
	return out
}

// Channel returns channel i.
func (s *Session) Channel(i int) Channel { return s.channels[i] }

// ConnectTime is the client's time from the first dial until all channels
// were usable; zero on the server.
func (s *Session) ConnectTime() time.Duration { return s.connectTime }

// Close closes every channel and connection of the session. QUIC
// connections are closed immediately (CONNECTION_CLOSE), so wait for the
// peer to have read what it needs first.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.stopSampling != nil {
			s.stopSampling()
			<-s.samplingDone
		}
		var errs []error
		for _, c := range s.channels {
			if err := c.Close(); err != nil && !isClosedErr(err) {
				errs = append(errs, err)
			}
		}
		for _, f := range s.closers {
			if err := f(); err != nil && !isClosedErr(err) {
				errs = append(errs, err)
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

func isClosedErr(err error) bool {
	return errors.Is(err, net.ErrClosed)
}

// Dial opens a session of opts.Channels channels to a Listener of the same
// arm at addr. All channels are dialled concurrently; ctx bounds the whole
// setup (and opts.HandshakeTimeout each connection).
func Dial(ctx context.Context, arm Arm, addr string, opts Options) (*Session, error) {
	arm, opts = arm.connections(opts)
	o, err := opts.validate(arm)
	if err != nil {
		return nil, err
	}
	switch arm {
	case ArmTCP:
		return dialTCP(ctx, addr, o)
	default:
		return dialQUIC(ctx, arm, addr, o)
	}
}
