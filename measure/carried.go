package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// carriedEnd is the carrier end behind a carried arm's listener or session
// (the quinn arms, quic-carrier): the workload's channels reach it as
// loopback TCP connections.
type carriedEnd interface {
	// state fills in st what the end had in force.
	state(st *transport.State)
	// stop stops the end; later calls return the first's result.
	stop() error
}

// localListeners makes n loopback TCP listeners with o's Listen hook, one
// per channel.
func localListeners(ctx context.Context, arm string, o transport.Options, n int) ([]net.Listener, error) {
	listen := o.Listen
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	var out []net.Listener
	for i := range n {
		l, err := listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			closeListeners(out)
			return nil, fmt.Errorf("the %s arm: a local listener for channel %d: %w", arm, i, err)
		}
		out = append(out, l)
	}
	return out, nil
}

func closeListeners(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}

func listenerAddrs(ls []net.Listener) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Addr().String()
	}
	return out
}

// dialLocal dials each of addrs with o's DialContext hook.
func dialLocal(ctx context.Context, arm string, o transport.Options, addrs []string) ([]net.Conn, error) {
	dial := o.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	var out []net.Conn
	for i, a := range addrs {
		conn, err := dial(ctx, "tcp", a)
		if err != nil {
			for _, c := range out {
				c.Close()
			}
			return nil, fmt.Errorf("the %s arm: channel %d's local address %s: %w", arm, i, a, err)
		}
		out = append(out, conn)
	}
	return out, nil
}

// carriedListener is a carried arm's server side: its carrier end and one
// local listener per channel, whose connections the end makes.
type carriedListener struct {
	arm     string
	targets []net.Listener
	end     carriedEnd
	addr    net.Addr
	cleanup func()
	once    sync.Once
	err     error
}

func (l *carriedListener) Addr() net.Addr { return l.addr }

// Accept waits for one connection on every channel's listener: the
// client's session.
func (l *carriedListener) Accept(ctx context.Context) (ArmSession, error) {
	s := &carriedSession{arm: l.arm, role: "server", end: l.end, chans: make([]net.Conn, len(l.targets))}
	errs := make([]error, len(l.targets))
	var wg sync.WaitGroup
	for i, tl := range l.targets {
		wg.Go(func() { s.chans[i], errs[i] = tl.Accept() })
	}
	stop := context.AfterFunc(ctx, func() { closeListeners(l.targets) })
	wg.Wait()
	stop()
	if err := errors.Join(errs...); err != nil {
		for _, c := range s.chans {
			if c != nil {
				c.Close()
			}
		}
		return nil, fmt.Errorf("the %s arm: accepting the channels: %w", l.arm, err)
	}
	s.started = time.Now()
	s.onClose = l.Close
	return s, nil
}

// Close closes the listeners and stops the end.
func (l *carriedListener) Close() error {
	l.once.Do(func() {
		closeListeners(l.targets)
		if l.end != nil {
			l.err = l.end.stop()
		}
		if l.cleanup != nil {
			l.cleanup()
		}
	})
	return l.err
}

// carriedSession is one end's channels: TCP connections to (client) or
// from (server) its carrier end.
type carriedSession struct {
	arm     string
	role    string
	end     carriedEnd
	chans   []net.Conn
	started time.Time
	connect time.Duration
	onClose func() error
	once    sync.Once
	err     error
}

func (s *carriedSession) Channels() []io.ReadWriteCloser {
	out := make([]io.ReadWriteCloser, len(s.chans))
	for i, c := range s.chans {
		out[i] = c
	}
	return out
}

// State is the session's own facts and what its end had in force.
func (s *carriedSession) State() transport.State {
	st := transport.State{Arm: transport.Arm(s.arm), Role: s.role, Channels: len(s.chans), Started: s.started, ConnectTime: s.connect}
	if s.end != nil {
		s.end.state(&st)
	}
	return st
}

// Close closes the channels and stops the end (the server's by closing its
// listener).
func (s *carriedSession) Close() error {
	s.once.Do(func() {
		for _, c := range s.chans {
			c.Close()
		}
		if s.onClose != nil {
			s.err = s.onClose()
		} else if s.end != nil {
			s.err = s.end.stop()
		}
	})
	return s.err
}

// closeForExit closes sess when it is a carried session and, when its end
// records more at exit (a quinn end's statistics), updates st with it.
func closeForExit(sess ArmSession, st *transport.State) {
	s, ok := sess.(*carriedSession)
	if !ok || st == nil {
		return
	}
	s.Close()
	if e, ok := s.end.(interface{ exited(*transport.State) }); ok {
		e.exited(st)
	}
}
