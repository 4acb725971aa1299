package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
)

// listenQUIC binds the quic and quic-per-channel arms' listener.
func (l *CarrierListener) listenQUIC(addr string) error {
	o := l.opts
	tlsConf, err := o.Certificate.serverTLS()
	if err != nil {
		return err
	}
	ep, err := newUDPEndpoint(l.ctx, "udp", addr, o)
	if err != nil {
		return chanErr(l.arm, "server", -1, "listen", err)
	}
	l.addr = ep.pc.LocalAddr()
	tr := &quic.Transport{
		Conn: ep.pc,
		ConnContext: func(ctx context.Context, _ *quic.ClientInfo) (context.Context, error) {
			return context.WithValue(ctx, recorderKey{}, newRecorder(time.Now(), o, string(l.arm)+"_server")), nil
		},
	}
	l.keepBase(func() error { return errors.Join(tr.Close(), ep.pc.Close()) })
	ln, err := tr.Listen(tlsConf, quicConfig(o))
	if err != nil {
		return chanErr(l.arm, "server", -1, "listen", err)
	}
	l.keepBase(ln.Close)
	socket := ep.state()
	l.wg.Go(func() {
		for {
			conn, err := ln.Accept(l.ctx)
			if err != nil {
				if l.ctx.Err() == nil {
					l.fail(chanErr(l.arm, "server", -1, "accept connection", err))
				}
				return
			}
			peer := carrierPeer(conn.RemoteAddr())
			if err := l.admitQUIC(peer); err != nil {
				_ = conn.CloseWithError(quicRefused, err.Error())
				l.report(chanErr(l.arm, "server", -1, fmt.Sprintf("connection from %s", conn.RemoteAddr()), err))
				continue
			}
			id, ok := l.keep(func() error { return conn.CloseWithError(0, "carrier closed") })
			if !ok {
				return
			}
			l.wg.Go(func() { l.handleQUIC(id, peer, conn, ep, socket) })
		}
	})
	return nil
}

// handleQUIC hands over every stream of one connection as it arrives,
// until the connection ends; then it forgets the connection, keeping its
// state as it was at the end.
func (l *CarrierListener) handleQUIC(id uint64, peer string, conn *quic.Conn, ep *udpEndpoint, socket UDPSocketState) {
	rec, _ := conn.Context().Value(recorderKey{}).(*recorder)
	qc := &quicConn{conn: conn, rec: rec, socket: socket}
	defer func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.conns, id)
		delete(l.quic, id)
		l.qconns.remove(peer)
		if len(qc.channels) > 0 {
			l.endedQUIC = appendEnded(l.endedQUIC, qc.state(), &l.unlisted)
		}
	}()
	if err := checkGSO(conn, ep); err != nil {
		_ = conn.CloseWithError(1, "gso")
		l.report(chanErr(l.arm, "server", -1, "GSO check", err))
		return
	}
	l.mu.Lock()
	l.quic[id] = qc
	l.mu.Unlock()
	for {
		st, err := conn.AcceptStream(l.ctx)
		if err != nil {
			return // the connection or the listener ended
		}
		w := l.wait(peer, func() { st.CancelRead(1) })
		l.wg.Go(func() { l.handleStream(qc, st, w) })
	}
}

func (l *CarrierListener) handleStream(qc *quicConn, st *quic.Stream, w *waiter) {
	ctx, cancel := context.WithTimeout(l.ctx, l.opts.HandshakeTimeout)
	defer cancel()
	if d, ok := ctx.Deadline(); ok {
		_ = st.SetReadDeadline(d)
	}
	h, raw, err := readCarrierHeader(st)
	l.unwait(w)
	_ = st.SetReadDeadline(time.Time{})
	if err == nil {
		err = l.checkProof(h, raw)
	}
	step := "header"
	var release func()
	if err == nil {
		step = fmt.Sprintf("channel %d", h.index)
		release, err = l.hold(w.peer, h, func() {
			if len(qc.channels) < maxListedStreams {
				qc.channels = append(qc.channels, h.index)
			}
		})
	}
	if err != nil {
		st.CancelRead(1)
		st.CancelWrite(1)
		l.report(chanErr(l.arm, "server", -1, fmt.Sprintf("%s (from %s)", step, qc.conn.RemoteAddr()), w.why(err)))
		return
	}
	if l.arm == ArmQUICPerChannel {
		// The connection was for this channel alone. Options.IdleTimeout
		// after the channel ends (time for its last bytes to be read and
		// acknowledged), the connection ends too.
		held := release
		release = sync.OnceFunc(func() {
			held()
			time.AfterFunc(l.opts.IdleTimeout, func() { _ = qc.conn.CloseWithError(0, "its channel ended") })
		})
	}
	l.deliver(carrierQUICChannel{quicChannel: quicChannel{Stream: st, index: h.index}, carrier: h.id, release: release})
}
