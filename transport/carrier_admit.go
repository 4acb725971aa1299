package transport

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// hold counts a channel from peer as handed over, unless it would pass a
// bound or repeat an open channel's carrier id and index. It returns what
// releases it; add runs under the lock when it is held.
func (l *CarrierListener) hold(peer string, h carrierHead, add func()) (release func(), err error) {
	key := carrierChannelKey{h.id, h.index}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.live[key]:
		return nil, fmt.Errorf("channel %d of carrier %016x is already open: a second with the same index is refused", h.index, h.id)
	case l.held.by[peer] >= l.opts.CarrierPeerLimit:
		return nil, fmt.Errorf("refused: %s already holds %d channels (Options.CarrierPeerLimit)", peer, l.held.by[peer])
	case l.held.total >= l.opts.CarrierLimit:
		return nil, fmt.Errorf("refused: the listener already holds %d channels (Options.CarrierLimit)", l.held.total)
	}
	l.live[key] = true
	l.held.add(peer)
	if l.count == 0 {
		l.started = time.Now()
	}
	l.count++
	add()
	return sync.OnceFunc(func() {
		l.mu.Lock()
		delete(l.live, key)
		l.held.remove(peer)
		l.mu.Unlock()
	}), nil
}

// checkProof checks a header's proof of the secret, its time and that its
// nonce is new, when the listener has a secret.
func (l *CarrierListener) checkProof(h carrierHead, raw []byte) error {
	secret := l.opts.CarrierSecret
	if len(secret) == 0 {
		return nil
	}
	if !hmac.Equal(h.proof[:], carrierProof(secret, raw[:carrierProofAt])) {
		if h.proof == [len(h.proof)]byte{} {
			return errors.New("the header carries no proof of the secret: give the client end the listener's secret (Options.CarrierSecret)")
		}
		return errors.New("wrong proof of the secret: do both ends hold the same secret?")
	}
	now := time.Now()
	if d := now.Sub(h.at); d > CarrierClockSkew || d < -CarrierClockSkew {
		return fmt.Errorf("the header says it was written at %s, %v from this end's clock: the two ends' clocks must agree within %v",
			h.at.UTC().Format(time.RFC3339), d.Round(time.Second), CarrierClockSkew)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.replay) >= l.sweepAt {
		for n, until := range l.replay {
			if now.After(until) {
				delete(l.replay, n)
			}
		}
		l.sweepAt = max(1024, 2*len(l.replay))
	}
	if _, seen := l.replay[h.nonce]; seen {
		return errors.New("the header is one seen before (a replay): refused")
	}
	if len(l.replay) >= maxReplayNonces {
		return fmt.Errorf("more than %d channels opened within %v: refused", maxReplayNonces, CarrierClockSkew)
	}
	l.replay[h.nonce] = h.at.Add(CarrierClockSkew)
	return nil
}

// admitQUIC counts a QUIC connection from peer, unless it would pass a
// bound.
func (l *CarrierListener) admitQUIC(peer string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.qconns.by[peer] >= l.opts.CarrierPeerLimit:
		return fmt.Errorf("refused: %s already holds %d connections (Options.CarrierPeerLimit)", peer, l.qconns.by[peer])
	case l.qconns.total >= l.opts.CarrierLimit:
		return fmt.Errorf("refused: the listener already holds %d connections (Options.CarrierLimit)", l.qconns.total)
	}
	l.qconns.add(peer)
	return nil
}

// carrierPeer is the peer a carrier listener counts a connection under
// (Options.CarrierPeerLimit): its IPv4 address, or its IPv6 address's /64
// (which one host usually holds whole).
func carrierPeer(a net.Addr) string {
	var ip net.IP
	switch a := a.(type) {
	case *net.TCPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	default:
		return a.String()
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// peerCount counts what each peer holds, and the total.
type peerCount struct {
	total int
	by    map[string]int
}

func (p *peerCount) add(peer string) {
	if p.by == nil {
		p.by = map[string]int{}
	}
	p.by[peer]++
	p.total++
}

func (p *peerCount) remove(peer string) {
	if p.by[peer]--; p.by[peer] <= 0 {
		delete(p.by, peer)
	}
	p.total--
}

// waiter is a connection or stream waiting for its header.
type waiter struct {
	peer string
	seq  uint64
	// stop ends its header read at once.
	stop      func()
	displaced atomic.Bool
}

// why is err, or why the read was cut short if it was displaced.
func (w *waiter) why(err error) error {
	if w.displaced.Load() {
		return fmt.Errorf("displaced before its header arrived by newer connections from %s or by more peers (Options.CarrierLimit, CarrierPeerLimit): %w", w.peer, err)
	}
	return err
}

// waitList holds the waiters by peer, each peer's oldest first.
type waitList struct {
	seq   uint64
	n     int
	peers map[string][]*waiter
}

// wait counts a connection or stream from peer as waiting for its header,
// displacing an older one when a bound is reached.
func (l *CarrierListener) wait(peer string, stop func()) *waiter {
	l.mu.Lock()
	w, victim := l.waiting.add(peer, stop, l.opts.CarrierLimit, l.opts.CarrierPeerLimit)
	l.mu.Unlock()
	if victim != nil {
		victim.stop()
	}
	return w
}

// add counts a waiter from peer, and displaces the peer's oldest when it
// has peerLimit waiting, or else, when limit wait in all, the oldest of
// the peer with the most: the victim, marked displaced, whose stop the
// caller calls once it no longer holds its lock.
func (q *waitList) add(peer string, stop func(), limit, peerLimit int) (w, victim *waiter) {
	q.seq++
	w = &waiter{peer: peer, seq: q.seq, stop: stop}
	if q.peers == nil {
		q.peers = map[string][]*waiter{}
	}
	switch {
	case len(q.peers[peer]) >= peerLimit:
		victim = q.peers[peer][0]
	case q.n >= limit:
		for _, ws := range q.peers {
			if victim == nil || len(ws) > len(q.peers[victim.peer]) ||
				len(ws) == len(q.peers[victim.peer]) && ws[0].seq < victim.seq {
				victim = ws[0]
			}
		}
	}
	if victim != nil {
		q.remove(victim)
		victim.displaced.Store(true)
	}
	q.peers[peer] = append(q.peers[peer], w)
	q.n++
	return w, victim
}

// unwait ends w's wait, if it is still counted.
func (l *CarrierListener) unwait(w *waiter) {
	l.mu.Lock()
	l.waiting.remove(w)
	l.mu.Unlock()
}

func (q *waitList) remove(w *waiter) {
	ws := q.peers[w.peer]
	i := slices.Index(ws, w)
	if i < 0 {
		return
	}
	ws = slices.Delete(ws, i, i+1)
	q.n--
	if len(ws) == 0 {
		delete(q.peers, w.peer)
	} else {
		q.peers[w.peer] = ws
	}
}

// keepBase adds a closer of the listening socket or transport.
func (l *CarrierListener) keepBase(f func() error) {
	l.mu.Lock()
	l.base = append(l.base, f)
	l.mu.Unlock()
}

// keep adds a live connection's closer and returns its id, or closes it
// now and reports false when the listener is closing.
func (l *CarrierListener) keep(f func() error) (uint64, bool) {
	l.mu.Lock()
	if l.ctx.Err() == nil {
		l.seq++
		l.conns[l.seq] = f
		l.mu.Unlock()
		return l.seq, true
	}
	l.mu.Unlock()
	_ = f()
	return 0, false
}

// endTCP forgets a TCP connection, keeping st (its state at its end) when
// it carried a channel.
func (l *CarrierListener) endTCP(id uint64, st *TCPConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, id)
	delete(l.tcp, id)
	if st != nil {
		l.endedTCP = appendEnded(l.endedTCP, *st, &l.unlisted)
	}
}

func appendEnded[T any](list []T, x T, unlisted *int) []T {
	if len(list) >= maxEndedListed {
		list = append(list[:0], list[1:]...)
		*unlisted++
	}
	return append(list, x)
}
