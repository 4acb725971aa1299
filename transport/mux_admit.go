package transport

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// muxAdmit bounds a carrier listener's carriers by Options.CarrierLimit in
// all and CarrierPeerLimit from one peer, counting apart those waiting for
// their hello (a waitList, as the tcp carrier listener's: past a bound an
// older one is displaced, so that idle connections cannot lock others
// out) and those served (past a bound a carrier is refused, and told why).
type muxAdmit struct {
	limit, peerLimit int

	mu      sync.Mutex
	waiting waitList
	served  peerCount // carriers served
}

func newMuxAdmit(o Options) *muxAdmit {
	a := &muxAdmit{limit: o.CarrierLimit, peerLimit: o.CarrierPeerLimit}
	if a.limit == 0 {
		a.limit = DefaultCarrierLimit
	}
	if a.peerLimit == 0 {
		a.peerLimit = min(DefaultCarrierPeerLimit, a.limit)
	}
	return a
}

// wait counts a carrier from peer as waiting for its hello, displacing an
// older one when a bound is reached.
func (a *muxAdmit) wait(peer string, stop func()) *waiter {
	a.mu.Lock()
	w, victim := a.waiting.add(peer, stop, a.limit, a.peerLimit)
	a.mu.Unlock()
	if victim != nil {
		victim.stop()
	}
	return w
}

// done ends w's wait; err, the hello's error, says why when w was
// displaced.
func (a *muxAdmit) done(w *waiter, err error) error {
	a.mu.Lock()
	a.waiting.remove(w)
	a.mu.Unlock()
	if err != nil {
		return w.why(err)
	}
	return nil
}

// serve counts a carrier from peer as served, unless a bound is reached,
// and returns what releases it.
func (a *muxAdmit) serve(peer string) (release func(), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.served.by[peer] >= a.peerLimit:
		return nil, fmt.Errorf("%s already has %d carriers served (Options.CarrierPeerLimit)", peer, a.served.by[peer])
	case a.served.total >= a.limit:
		return nil, fmt.Errorf("the listener already serves %d carriers (Options.CarrierLimit)", a.served.total)
	}
	a.served.add(peer)
	return sync.OnceFunc(func() {
		a.mu.Lock()
		a.served.remove(peer)
		a.mu.Unlock()
	}), nil
}

// refuseMux tells a carrier's client why it is refused, as far as a
// short write allows, and closes ch.
func refuseMux(ch CarrierChannel, conn *net.TCPConn, why error) {
	msg := []byte(why.Error())
	msg = msg[:min(len(msg), muxMaxPayload)]
	frame := make([]byte, muxHeaderLen, muxHeaderLen+len(msg))
	putMuxHeader(frame, muxFrame{kind: muxRefuse, channel: 0, length: len(msg)})
	_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(append(frame, msg...)); err == nil {
		// Closed with the client's bytes unread, the connection would be
		// reset, and a reset can discard the refusal before the client
		// reads it: end this side, and read what the client still sends
		// until it closes, for a second at most.
		_ = conn.CloseWrite()
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = io.Copy(io.Discard, conn)
	}
	_ = ch.Close()
}
