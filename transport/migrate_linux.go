package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/quic-go/quic-go"
)

// Migrate moves a client session's QUIC connections to newLocal, the way a
// client that changed networks does (RFC 9000 section 9): for each
// connection a new UDP socket bound to newLocal:0 (behind the GSO-off
// wrapper unless Options.AllowGSO), a quic.Transport on it, Conn.AddPath,
// Path.Probe until the server answers the path challenge or ctx ends, and
// Path.Switch. The old socket stays open (quic-go still accepts late
// packets on it) until the session closes.
//
// Migrate is for the client end of the quic and quic-per-channel arms; for
// the tcp arm it returns ErrCannotMigrate. On failure the connection stays
// on its old path; the result says which connections moved. Call it from
// one goroutine at a time and not concurrently with Close; the channels
// may carry data throughout.
func (s *Session) Migrate(ctx context.Context, newLocal netip.Addr) (MigrationResult, error) {
	res := MigrationResult{Started: time.Now()}
	if s.arm == ArmTCP {
		return res, chanErr(s.arm, s.role, -1, "migrate", ErrCannotMigrate)
	}
	if s.role != "client" {
		return res, chanErr(s.arm, s.role, -1, "migrate", errors.New(
			"only the client end of a QUIC connection can migrate; call Migrate on the session Dial returned"))
	}
	if !newLocal.IsValid() {
		return res, chanErr(s.arm, s.role, -1, "migrate", errors.New("no new local address given: pass the address the client now has"))
	}
	network := "udp4"
	if !newLocal.Unmap().Is4() {
		network = "udp6"
	}
	var errs []error
	for _, qc := range s.quic {
		p := PathMigration{Channels: qc.channels, From: qc.conn.LocalAddr().String()}
		if err := s.migrateConn(ctx, qc, network, newLocal, res.Started, &p); err != nil {
			p.Err = err.Error()
			errs = append(errs, err)
		}
		res.Paths = append(res.Paths, p)
	}
	res.Elapsed = time.Since(res.Started)
	if len(errs) > 0 {
		return res, chanErr(s.arm, s.role, -1, "migrate to "+newLocal.String(), errors.Join(errs...))
	}
	return res, nil
}

func (s *Session) migrateConn(ctx context.Context, qc *quicConn, network string, newLocal netip.Addr, started time.Time, p *PathMigration) error {
	ep, err := newUDPEndpoint(ctx, network, net.JoinHostPort(newLocal.String(), "0"), s.opts)
	if err != nil {
		return fmt.Errorf("UDP socket on %s: %w", newLocal, err)
	}
	// The connection is up: the new path's socket rides out a moment
	// without a route as the first one does.
	ep.keepThroughNoRoute()
	tr := &quic.Transport{Conn: ep.pc}
	closeNew := func() { _ = tr.Close(); _ = ep.pc.Close() }
	path, err := qc.conn.AddPath(tr)
	if err != nil {
		closeNew()
		return fmt.Errorf("AddPath: %w", err)
	}
	if err := path.Probe(ctx); err != nil {
		_ = path.Close()
		closeNew()
		return fmt.Errorf("probing the path from %s: %w", ep.pc.LocalAddr(), err)
	}
	p.Validated = time.Since(started)
	if err := path.Switch(); err != nil {
		_ = path.Close()
		closeNew()
		return fmt.Errorf("switching to the path from %s: %w", ep.pc.LocalAddr(), err)
	}
	p.Switched = time.Since(started)
	p.To = ep.pc.LocalAddr().String()
	if ep.wrapped {
		qc.socket = ep.state()
	}
	if ep.routes != nil {
		qc.routes = append(qc.routes, ep.routes)
	}
	// The connection closes before its transports (closers run in order,
	// and the connection's own closer was added at dial time).
	s.closers = append(s.closers, func() error { return errors.Join(tr.Close(), ep.pc.Close()) })
	return nil
}

// RemoteAddrs returns the address each of the session's connections
// currently sends to, in channel order of the connections (one per channel
// for tcp and quic-per-channel, one for quic). On a QUIC server it changes
// when the client migrates and the server has validated the new path;
// polling it shows when the server moved.
func (s *Session) RemoteAddrs() []string {
	var out []string
	for _, c := range s.tcp {
		out = append(out, c.remoteAddr())
	}
	for _, qc := range s.quic {
		out = append(out, qc.conn.RemoteAddr().String())
	}
	return out
}

// ConnErrors returns, per connection in the same order as RemoteAddrs, why
// the connection has ended ("" while it is open). For QUIC this is quic-go's
// close cause (idle timeout, the peer's CONNECTION_CLOSE, a local send
// error); for tcp it names the TCP state when that is no longer
// ESTABLISHED, which it stays while the kernel retransmits into a path
// that has gone (the socket's pending error is not read: that would take
// it from the next read or write).
func (s *Session) ConnErrors() []string {
	var out []string
	for _, c := range s.tcp {
		out = append(out, c.describeState())
	}
	for _, qc := range s.quic {
		e := ""
		if qc.conn.Context().Err() != nil {
			if cause := context.Cause(qc.conn.Context()); cause != nil {
				e = cause.Error()
			}
		}
		out = append(out, e)
	}
	return out
}

func (c *tcpConn) remoteAddr() string { return c.conn.RemoteAddr().String() }

// describeState reads the connection's TCP state without disturbing it
// (SO_ERROR would clear the error the next read or write is due to report).
func (c *tcpConn) describeState() string {
	info, err := readTCPInfo(c.raw, 0)
	if err != nil {
		return "TCP_INFO unreadable: " + err.Error()
	}
	if info.State == tcpEstablished {
		return ""
	}
	return "TCP state " + tcpStateName(info.State)
}

const tcpEstablished = 1

// tcpStateName names a tcpi_state value (include/net/tcp_states.h).
func tcpStateName(s uint8) string {
	names := []string{1: "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT",
		"CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV"}
	if int(s) < len(names) && names[s] != "" {
		return names[s]
	}
	return strconv.Itoa(int(s))
}
