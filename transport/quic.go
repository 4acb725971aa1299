package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
)

// quicConfig is the quic-go configuration of both QUIC arms, both ends.
func quicConfig(o Options) *quic.Config {
	return &quic.Config{
		HandshakeIdleTimeout:           o.HandshakeTimeout,
		MaxIdleTimeout:                 o.IdleTimeout,
		KeepAlivePeriod:                o.KeepAlive,
		InitialStreamReceiveWindow:     StreamReceiveWindow,
		MaxStreamReceiveWindow:         StreamReceiveWindow,
		InitialConnectionReceiveWindow: ConnectionReceiveWindow,
		MaxConnectionReceiveWindow:     ConnectionReceiveWindow,
		MaxIncomingStreams:             int64(max(o.Channels, 100)),
		MaxIncomingUniStreams:          -1,
		InitialPacketSize:              uint16(o.packetSize()),
		DisablePathMTUDiscovery:        true,
		Tracer:                         tracer,
	}
}

// quicConn is one QUIC connection of a session and what it needs for State.
type quicConn struct {
	conn     *quic.Conn
	rec      *recorder
	socket   UDPSocketState
	channels []int
	// routes are the client's sockets, the first and any Migrate added,
	// each counting the sends it dropped for want of a route.
	routes []*routeLossConn
}

func (c *quicConn) state() QUICConnState {
	cs := c.conn.ConnectionState()
	st := c.conn.ConnectionStats()
	out := QUICConnState{
		Channels:                   c.channels,
		LocalAddr:                  c.conn.LocalAddr().String(),
		RemoteAddr:                 c.conn.RemoteAddr().String(),
		CongestionControl:          QUICCongestionControl,
		GSO:                        cs.GSO,
		QUICVersion:                cs.Version.String(),
		TLSVersion:                 tls.VersionName(cs.TLS.Version),
		ALPN:                       cs.TLS.NegotiatedProtocol,
		Socket:                     c.socket,
		UnroutableDrops:            c.unroutableDrops(),
		ConfiguredPacketSize:       c.rec.packetSize,
		PathMTUDiscovery:           false,
		MaxConnectionReceiveWindow: ConnectionReceiveWindow,
		MaxStreamReceiveWindow:     StreamReceiveWindow,
		Stats: QUICStats{
			MinRTT: st.MinRTT, LatestRTT: st.LatestRTT, SmoothedRTT: st.SmoothedRTT, MeanDeviation: st.MeanDeviation,
			CongestionWindow: st.CongestionWindow,
			BytesSent:        st.BytesSent, PacketsSent: st.PacketsSent,
			BytesReceived: st.BytesReceived, PacketsReceived: st.PacketsReceived,
			BytesLost: st.BytesLost, PacketsLost: st.PacketsLost,
		},
	}
	c.rec.fill(&out)
	return out
}

func (c *quicConn) unroutableDrops() int64 {
	var n int64
	for _, r := range c.routes {
		n += r.dropped.Load()
	}
	return n
}

// quicChannel is a QUIC stream as a Channel.
type quicChannel struct {
	*quic.Stream
	index int
}

func (c quicChannel) Index() int        { return c.index }
func (c quicChannel) CloseWrite() error { return c.Stream.Close() }

// Close ends both directions: FIN after buffered data, and STOP_SENDING for
// whatever the peer still sends.
func (c quicChannel) Close() error {
	c.Stream.CancelRead(0)
	return c.Stream.Close()
}

func (l *Listener) listenQUIC(addr string) error {
	o := l.opts
	role := "server"
	tlsConf, err := o.Certificate.serverTLS()
	if err != nil {
		return err
	}
	ep, err := newUDPEndpoint(l.ctx, "udp", addr, o)
	if err != nil {
		return chanErr(l.arm, role, -1, "listen", err)
	}
	l.addr = ep.pc.LocalAddr()
	tr := &quic.Transport{
		Conn: ep.pc,
		ConnContext: func(ctx context.Context, _ *quic.ClientInfo) (context.Context, error) {
			// The session's time base is set when the session completes;
			// until then metrics are timed from the connection's start.
			return context.WithValue(ctx, recorderKey{}, newRecorder(time.Now(), o, string(l.arm)+"_server")), nil
		},
	}
	// Closing the transport closes every connection on it, so it and the
	// socket stay open until the listener and every session it delivered
	// are closed.
	shared := &refCloser{n: 1, close: func() error { return errors.Join(tr.Close(), ep.pc.Close()) }}
	l.closers = append(l.closers, shared.release)
	ln, err := tr.Listen(tlsConf, quicConfig(o))
	if err != nil {
		return chanErr(l.arm, role, -1, "listen", err)
	}
	l.closers = append([]func() error{ln.Close}, l.closers...)
	l.shared = shared
	socket := ep.state()
	var g grouper[*acceptedStream]
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			conn, err := ln.Accept(l.ctx)
			if err != nil {
				if l.ctx.Err() == nil {
					l.fail(chanErr(l.arm, role, -1, "accept connection", err))
				}
				return
			}
			if o.quicAccepted != nil {
				o.quicAccepted()
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				if err := checkGSO(conn, ep); err != nil {
					_ = conn.CloseWithError(1, "gso")
					l.deliver(nil, chanErr(l.arm, role, -1, "GSO check", err))
					return
				}
				rec, _ := conn.Context().Value(recorderKey{}).(*recorder)
				qc := &quicConn{conn: conn, rec: rec, socket: socket}
				if l.arm == ArmQUIC {
					l.handleQUIC(qc)
				} else {
					l.handleQUICPerChannel(qc, &g)
				}
			}()
		}
	}()
	return nil
}

type acceptedStream struct {
	qc     *quicConn
	stream *quic.Stream
}

// handleQUIC accepts the N streams of one connection and orders them by
// their headers.
func (l *Listener) handleQUIC(qc *quicConn) {
	o := l.opts
	role := "server"
	ctx, cancel := context.WithTimeout(l.ctx, o.HandshakeTimeout)
	defer cancel()
	streams := make([]*quic.Stream, o.Channels)
	var sid sessionID
	for k := range o.Channels {
		st, err := qc.conn.AcceptStream(ctx)
		if err != nil {
			_ = qc.conn.CloseWithError(1, "stream accept failed")
			l.deliver(nil, chanErr(l.arm, role, -1, fmt.Sprintf("accepting stream %d of %d", k+1, o.Channels), err))
			return
		}
		h, err := readStreamHeader(ctx, st)
		if err == nil && h.count != o.Channels {
			err = fmt.Errorf("client opens %d channels but the server expects %d: set the same Options.Channels on both ends", h.count, o.Channels)
		}
		if err == nil && k > 0 && h.session != sid {
			err = fmt.Errorf("stream belongs to session %016x, not %016x", uint64(h.session), uint64(sid))
		}
		if err == nil && streams[h.index] != nil {
			err = fmt.Errorf("channel %d arrived twice", h.index)
		}
		if err != nil {
			_ = qc.conn.CloseWithError(1, "bad channel header")
			l.deliver(nil, chanErr(l.arm, role, h.index, "header read", err))
			return
		}
		sid = h.session
		streams[h.index] = st
	}
	s := &Session{arm: l.arm, role: role, opts: o, started: time.Now()}
	qc.rec.rebase(s.started)
	for i, st := range streams {
		qc.channels = append(qc.channels, i)
		s.channels = append(s.channels, quicChannel{Stream: st, index: i})
	}
	s.quic = []*quicConn{qc}
	s.closers = append(s.closers, func() error { return qc.conn.CloseWithError(0, "session closed") })
	l.holdShared(s)
	s.applyPriority(streams)
	l.deliver(s, nil)
}

// handleQUICPerChannel accepts the one stream of a connection and groups the
// connection with the others of its session.
func (l *Listener) handleQUICPerChannel(qc *quicConn, g *grouper[*acceptedStream]) {
	o := l.opts
	role := "server"
	ctx, cancel := context.WithTimeout(l.ctx, o.HandshakeTimeout)
	defer cancel()
	st, err := qc.conn.AcceptStream(ctx)
	if err != nil {
		_ = qc.conn.CloseWithError(1, "stream accept failed")
		l.deliver(nil, chanErr(l.arm, role, -1, "accepting the stream", err))
		return
	}
	h, err := readStreamHeader(ctx, st)
	if err == nil && h.count != o.Channels {
		err = fmt.Errorf("client opens %d channels but the server expects %d: set the same Options.Channels on both ends", h.count, o.Channels)
	}
	if err != nil {
		_ = qc.conn.CloseWithError(1, "bad channel header")
		l.deliver(nil, chanErr(l.arm, role, h.index, "header read", err))
		return
	}
	qc.channels = []int{h.index}
	items, started, err := g.add(h, &acceptedStream{qc: qc, stream: st}, o.HandshakeTimeout, func(have []*acceptedStream, missing []int) {
		for _, a := range have {
			_ = a.qc.conn.CloseWithError(1, "session incomplete")
		}
		l.deliver(nil, chanErr(l.arm, role, missing[0], "waiting for the session's channels",
			fmt.Errorf("channels %v of session %016x did not arrive within %v", missing, uint64(h.session), o.HandshakeTimeout)))
	})
	if err != nil {
		_ = qc.conn.CloseWithError(1, "bad channel header")
		l.deliver(nil, chanErr(l.arm, role, h.index, "grouping", err))
		return
	}
	if items == nil {
		return
	}
	s := &Session{arm: l.arm, role: role, opts: o, started: started}
	for i, a := range items {
		a.qc.rec.rebase(started)
		s.channels = append(s.channels, quicChannel{Stream: a.stream, index: i})
		s.quic = append(s.quic, a.qc)
		c := a.qc.conn
		s.closers = append(s.closers, func() error { return c.CloseWithError(0, "session closed") })
	}
	l.holdShared(s)
	l.deliver(s, nil)
}

// readStreamHeader reads a channel header from a stream within ctx.
func readStreamHeader(ctx context.Context, st *quic.Stream) (channelHeader, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = st.SetReadDeadline(d)
	}
	h, err := readHeader(st)
	_ = st.SetReadDeadline(time.Time{})
	if err != nil {
		return channelHeader{index: -1}, err
	}
	return h, nil
}

// applyPriority sets the configured priority on this end's streams.
func (s *Session) applyPriority(streams []*quic.Stream) {
	if !s.opts.Priority {
		return
	}
	streams[s.opts.PriorityChannel].SetPriority(priorityUrgency, false)
	s.priority = &PriorityState{Channel: s.opts.PriorityChannel, Urgency: priorityUrgency, Incremental: false, OthersUrgency: 3}
}

func dialQUIC(ctx context.Context, arm Arm, addr string, o Options) (*Session, error) {
	role := "client"
	tlsConf, err := o.Certificate.clientTLS()
	if err != nil {
		return nil, err
	}
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, chanErr(arm, role, -1, "resolve", err)
	}
	network := "udp4"
	if raddr.IP.To4() == nil {
		network = "udp6"
	}
	sid, err := newSessionID()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	s := &Session{arm: arm, role: role, opts: o, started: started}
	fail := func(err error) (*Session, error) {
		_ = s.Close()
		return nil, err
	}
	if arm == ArmQUIC {
		ep, err := newUDPEndpoint(ctx, network, "", o)
		if err != nil {
			return fail(chanErr(arm, role, -1, "UDP socket", err))
		}
		qc, closers, err := dialQUICConn(ctx, arm, -1, ep, raddr, tlsConf, o, started)
		s.closers = append(s.closers, closers...)
		if err != nil {
			return fail(err)
		}
		s.quic = []*quicConn{qc}
		// Open every stream and write its header. quic-go tells the peer
		// about a stream only when the stream first carries data, so the
		// header is what makes the server's AcceptStream return; without
		// it a channel that stays quiet would never appear there.
		streams := make([]*quic.Stream, o.Channels)
		for i := range o.Channels {
			st, err := openChannelStream(ctx, arm, qc.conn, i, sid, o)
			if err != nil {
				return fail(err)
			}
			streams[i] = st
			qc.channels = append(qc.channels, i)
			s.channels = append(s.channels, quicChannel{Stream: st, index: i})
		}
		s.applyPriority(streams)
		s.connectTime = time.Since(started)
		return s, nil
	}
	// quic-per-channel: N connections, each on its own UDP socket, dialled
	// concurrently, one stream each.
	type result struct {
		qc      *quicConn
		st      *quic.Stream
		closers []func() error
		err     error
	}
	res := make([]result, o.Channels)
	var wg sync.WaitGroup
	for i := range o.Channels {
		wg.Go(func() {
			r := &res[i]
			ep, err := newUDPEndpoint(ctx, network, "", o)
			if r.err = err; r.err != nil {
				r.err = chanErr(arm, role, i, "UDP socket", r.err)
				return
			}
			r.qc, r.closers, r.err = dialQUICConn(ctx, arm, i, ep, raddr, tlsConf, o, started)
			if r.err != nil {
				return
			}
			r.qc.channels = []int{i}
			r.st, r.err = openChannelStream(ctx, arm, r.qc.conn, i, sid, o)
		})
	}
	wg.Wait()
	connect := time.Since(started)
	var errs []error
	for i, r := range res {
		s.closers = append(s.closers, r.closers...)
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		s.quic = append(s.quic, r.qc)
		s.channels = append(s.channels, quicChannel{Stream: r.st, index: i})
	}
	if len(errs) > 0 {
		return fail(errors.Join(errs...))
	}
	s.connectTime = connect
	return s, nil
}

// dialQUICConn opens one QUIC connection on the socket ep. The returned
// closers close the connection, transport and socket, in that order, and
// are returned even on error (the socket's always).
func dialQUICConn(ctx context.Context, arm Arm, ch int, ep *udpEndpoint, raddr *net.UDPAddr, tlsConf *tls.Config, o Options,
	base time.Time) (*quicConn, []func() error, error) {
	role := "client"
	tr := &quic.Transport{Conn: ep.pc}
	closers := []func() error{tr.Close, ep.pc.Close}
	rec := newRecorder(base, o, string(arm)+"_client")
	hctx, cancel := context.WithTimeout(context.WithValue(ctx, recorderKey{}, rec), 2*o.HandshakeTimeout)
	defer cancel()
	conn, err := tr.Dial(hctx, raddr, tlsConf.Clone(), quicConfig(o))
	if err != nil {
		return nil, closers, chanErr(arm, role, ch, "QUIC handshake with "+raddr.String(), err)
	}
	closers = append([]func() error{func() error { return conn.CloseWithError(0, "session closed") }}, closers...)
	if err := checkGSO(conn, ep); err != nil {
		return nil, closers, chanErr(arm, role, ch, "GSO check", err)
	}
	// Up: from now on a moment without a route is loss, not the end.
	ep.keepThroughNoRoute()
	qc := &quicConn{conn: conn, rec: rec, socket: ep.state()}
	if ep.routes != nil {
		qc.routes = []*routeLossConn{ep.routes}
	}
	return qc, closers, nil
}

func openChannelStream(ctx context.Context, arm Arm, conn *quic.Conn, i int, sid sessionID, o Options) (*quic.Stream, error) {
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, chanErr(arm, "client", i, "open stream", err)
	}
	deadline := time.Now().Add(o.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = st.SetWriteDeadline(deadline)
	// This write is the stream's first: it is what makes the stream exist
	// for the server (see dialQUIC).
	if _, err := st.Write(channelHeader{session: sid, index: i, count: o.Channels}.marshal()); err != nil {
		return nil, chanErr(arm, "client", i, "header write", err)
	}
	_ = st.SetWriteDeadline(time.Time{})
	return st, nil
}

// refCloser closes a shared resource when its last holder releases it.
type refCloser struct {
	mu    sync.Mutex
	n     int
	close func() error
}

// acquire adds a holder; it fails once the resource has been closed.
func (r *refCloser) acquire() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return false
	}
	r.n++
	return true
}

func (r *refCloser) release() error {
	r.mu.Lock()
	r.n--
	last := r.n == 0
	r.mu.Unlock()
	if last {
		return r.close()
	}
	return nil
}

// holdShared keeps the listener's transport open for as long as s is.
func (l *Listener) holdShared(s *Session) {
	if l.shared != nil && l.shared.acquire() {
		s.closers = append(s.closers, l.shared.release)
	}
}
