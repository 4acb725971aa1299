package twohost

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// Before a connection proves it holds the secret it costs nothing to
// open, so the daemon bounds how many wait for a proof at once, and keeps
// the newest rather than refusing it: a connection that has waited
// longest without a proof gives way. Connections are counted per source
// (an IPv4 address, or an IPv6 /64, which one host usually holds whole):
// at most maxPreAuthPerSource from one source, and at most maxPreAuth in
// all, where the one that gives way comes from the source holding the
// most. An attacker that holds idle connections, or reopens them as fast
// as they end, therefore displaces only its own, and a driver from
// another address always gets its handshake. A driver from the
// attacker's own address is displaced only if the attacker opens
// maxPreAuthPerSource connections while its handshake (one round trip)
// is under way, and a displaced driver tries again (openSession).
const (
	maxPreAuthPerSource = 4
	maxPreAuth          = 64
	// daemonHandshakeTimeout bounds a connection's whole handshake, from
	// its greeting to its proof: a round trip, and a few lost segments'
	// retransmissions on a poor path.
	daemonHandshakeTimeout = 5 * time.Second
)

// preAuth is one connection waiting for its proof.
type preAuth struct {
	conn   net.Conn
	source string
	since  time.Time
	seq    uint64 // admission order
	// displaced is set, under daemon.mu, when it gave way to a newer
	// connection.
	displaced atomic.Bool
}

// sourceOf is the source a connection is counted under: its IPv4
// address, or its IPv6 address's /64.
func sourceOf(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if v4 := ta.IP.To4(); v4 != nil {
		return v4.String()
	}
	return ta.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// admit counts c among the connections waiting for a proof, displacing
// one that has waited longer if a bound is reached. d.mu must be held.
func (d *Daemon) admit(c net.Conn) *preAuth {
	d.preAuthSeq++
	p := &preAuth{conn: c, source: sourceOf(c.RemoteAddr()), since: time.Now(), seq: d.preAuthSeq}
	if d.preAuth == nil {
		d.preAuth = map[string][]*preAuth{}
	}
	var victim *preAuth
	switch {
	case len(d.preAuth[p.source]) >= maxPreAuthPerSource:
		victim = d.preAuth[p.source][0]
	case d.preAuthCount >= maxPreAuth:
		for _, q := range d.preAuth {
			if victim == nil || len(q) > len(d.preAuth[victim.source]) ||
				len(q) == len(d.preAuth[victim.source]) && q[0].seq < victim.seq {
				victim = q[0]
			}
		}
	}
	if victim != nil {
		d.forget(victim)
		victim.displaced.Store(true)
		// Its reads end at once; its writes stay open for the refusal.
		if tc, ok := victim.conn.(*net.TCPConn); ok {
			tc.CloseRead()
		} else {
			victim.conn.SetReadDeadline(time.Now())
		}
	}
	d.preAuth[p.source] = append(d.preAuth[p.source], p)
	d.preAuthCount++
	return p
}

// forget removes p from the connections waiting for a proof, if it is
// still among them. d.mu must be held.
func (d *Daemon) forget(p *preAuth) {
	q := d.preAuth[p.source]
	for i, x := range q {
		if x == p {
			q = append(q[:i:i], q[i+1:]...)
			d.preAuthCount--
			break
		}
	}
	if len(q) == 0 {
		delete(d.preAuth, p.source)
	} else {
		d.preAuth[p.source] = q
	}
}

// displacedWhy is the refusal a displaced connection reads.
func displacedWhy(source string) string {
	return fmt.Sprintf("displaced before its proof by newer connections (at most %d from %s, %d in all, wait for a proof at once; "+
		"the one that waited longest gives way): try again", maxPreAuthPerSource, source, maxPreAuth)
}
