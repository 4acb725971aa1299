package measure

import (
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// muxAdmit bounds a carrier listener's carriers by Options.CarrierLimit in
// all and CarrierPeerLimit from one peer, counting apart those waiting for
// their hello (past a bound the oldest is displaced, so that idle
// connections cannot lock others out) and those served (past a bound a
// carrier is refused, and told why).
type muxAdmit struct {
	limit, peerLimit int

	mu      sync.Mutex
	waiting []*muxWaiter // oldest first
	served  map[string]int
	total   int // carriers served
}

// muxWaiter is a carrier waiting for its hello.
type muxWaiter struct {
	peer      string
	stop      func() // ends its wait at once
	displaced atomic.Bool
}

func newMuxAdmit(o transport.Options) *muxAdmit {
	a := &muxAdmit{limit: o.CarrierLimit, peerLimit: o.CarrierPeerLimit, served: map[string]int{}}
	if a.limit == 0 {
		a.limit = transport.DefaultCarrierLimit
	}
	if a.peerLimit == 0 {
		a.peerLimit = min(transport.DefaultCarrierPeerLimit, a.limit)
	}
	return a
}

// wait counts a carrier from peer as waiting for its hello, displacing
// the peer's oldest, or else the oldest of all, when a bound is reached.
func (a *muxAdmit) wait(peer string, stop func()) *muxWaiter {
	w := &muxWaiter{peer: peer, stop: stop}
	a.mu.Lock()
	var victim *muxWaiter
	if i := slices.IndexFunc(a.waiting, func(x *muxWaiter) bool { return x.peer == peer }); i >= 0 &&
		a.count(peer) >= a.peerLimit {
		victim = a.waiting[i]
	} else if len(a.waiting) >= a.limit {
		victim = a.waiting[0]
	}
	if victim != nil {
		a.remove(victim)
		victim.displaced.Store(true)
	}
	a.waiting = append(a.waiting, w)
	a.mu.Unlock()
	if victim != nil {
		victim.stop()
	}
	return w
}

// count is how many of peer's carriers wait; a.mu is held.
func (a *muxAdmit) count(peer string) int {
	n := 0
	for _, x := range a.waiting {
		if x.peer == peer {
			n++
		}
	}
	return n
}

func (a *muxAdmit) remove(w *muxWaiter) {
	if i := slices.Index(a.waiting, w); i >= 0 {
		a.waiting = slices.Delete(a.waiting, i, i+1)
	}
}

// done ends w's wait; err, the hello's error, gains why when w was
// displaced.
func (a *muxAdmit) done(w *muxWaiter, err error) error {
	a.mu.Lock()
	a.remove(w)
	a.mu.Unlock()
	if err != nil && w.displaced.Load() {
		return fmt.Errorf("displaced before its hello by newer carriers from %s or by more peers (Options.CarrierLimit, CarrierPeerLimit): %w", w.peer, err)
	}
	return err
}

// serve counts a carrier from peer as served, unless a bound is reached,
// and returns what releases it.
func (a *muxAdmit) serve(peer string) (release func(), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.served[peer] >= a.peerLimit:
		return nil, fmt.Errorf("%s already has %d carriers served (Options.CarrierPeerLimit)", peer, a.served[peer])
	case a.total >= a.limit:
		return nil, fmt.Errorf("the listener already serves %d carriers (Options.CarrierLimit)", a.total)
	}
	a.served[peer]++
	a.total++
	return sync.OnceFunc(func() {
		a.mu.Lock()
		if a.served[peer]--; a.served[peer] <= 0 {
			delete(a.served, peer)
		}
		a.total--
		a.mu.Unlock()
	}), nil
}

// refuseMux tells a carrier's client why it is refused, as far as a
// short write allows, and closes ch.
func refuseMux(ch transport.CarrierChannel, conn *net.TCPConn, why error) {
	msg := []byte(why.Error())
	msg = msg[:min(len(msg), MuxMaxPayload)]
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
