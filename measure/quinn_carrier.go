package measure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// quinnCarrier is the client end of a quinn-<controller> carrier: quinn's
// client end with one channel, whose every connection is a new stream, and
// transport's TCP carrier to that channel's local port, which writes each
// channel's carrier header.
type quinnCarrier struct {
	*transport.Carrier
	arm  quinnArm
	opts transport.Options
	end  *quinncarrier.End
	exit *quinncarrier.EndStats
	dir  string
	once sync.Once
}

// quinnCarrierListener is the server end: quinn's server end, whose one
// channel's target is transport's TCP carrier listener on loopback, which
// reads (and checks) each stream's header.
type quinnCarrierListener struct {
	*transport.CarrierListener
	arm  quinnArm
	opts transport.Options
	end  *quinncarrier.End
	exit *quinncarrier.EndStats
	dir  string
	addr net.Addr
	once sync.Once
}

// quinnCarrierOptions are the options of the TCP carrier on loopback
// beside a quinn end: o's secret, limits and hooks, no certificate and the
// host's congestion control (the link is quinn's).
func quinnCarrierOptions(q quinnArm, o transport.Options) (transport.Options, error) {
	if o.NotSentLowat > 0 {
		return o, fmt.Errorf("the %s arm carries its channels over UDP: TCP_NOTSENT_LOWAT (transport.Options.NotSentLowat) does not apply", q.Name())
	}
	o.CongestionControl, o.Certificate, o.Channels = "", transport.Certificate{}, 0
	return o, nil
}

// quinnEndConfig is the carrier's configuration for one quinn end with a
// single channel.
func quinnEndConfig(ctx context.Context, q quinnArm, o transport.Options) (quinncarrier.Config, error) {
	if len(o.Certificate.CertPEM) == 0 {
		return quinncarrier.Config{}, fmt.Errorf("the %s carrier needs a certificate (transport.Options.Certificate)", q.Name())
	}
	o.Channels, o.Priority = 1, false
	return q.config(ctx, o)
}

func dialQuinnCarrier(ctx context.Context, q quinnArm, addr string, o transport.Options) (ArmCarrier, error) {
	inner, err := quinnCarrierOptions(q, o)
	if err != nil {
		return nil, err
	}
	c, err := quinnEndConfig(ctx, q, o)
	if err != nil {
		return nil, err
	}
	qc := &quinnCarrier{arm: q, opts: o, dir: c.Dir}
	ns, err := hookNamespace(ctx, o)
	if err != nil {
		qc.Close()
		return nil, err
	}
	qc.end, err = quinncarrier.StartClient(ctx, c, ns, addr, "127.0.0.1", 1, o.Certificate)
	closeNamespace(ns)
	if err == nil {
		err = checkQuinnReady(qc.end.Ready(), c)
	}
	if err == nil {
		qc.Carrier, err = transport.DialCarrier(ctx, transport.ArmTCP, qc.end.Ready().Channels[0], inner)
	}
	if err != nil {
		qc.Close()
		return nil, fmt.Errorf("the %s carrier: %w", q.Name(), err)
	}
	return qc, nil
}

// State is the quinn client end's settings, read back when it was ready,
// and its connection's statistics at exit once it has closed.
func (c *quinnCarrier) State() transport.State {
	in := c.Carrier.State()
	return quinnState(c.arm, "client", c.end.Ready(), c.exit, c.opts, in.Channels, in.Started, in.ConnectTime)
}

func (c *quinnCarrier) recordsAtExit() {}

// Close closes the TCP carrier and stops the quinn end.
func (c *quinnCarrier) Close() error {
	var err error
	c.once.Do(func() {
		var inner func() error
		if c.Carrier != nil {
			inner = c.Carrier.Close
		}
		c.exit, err = closeQuinnCarrier(inner, c.end, c.dir)
	})
	return err
}

// closeQuinnCarrier closes a quinn carrier's TCP side (inner, when there
// is one), stops its quinn end and removes its directory. It returns what
// the end recorded at exit, when that could be read.
func closeQuinnCarrier(inner func() error, end *quinncarrier.End, dir string) (*quinncarrier.EndStats, error) {
	var err error
	var exit *quinncarrier.EndStats
	if inner != nil {
		err = inner()
	}
	if end != nil {
		st, serr := end.Stop()
		if serr == nil {
			exit = &st
		}
		err = errors.Join(err, serr)
	}
	os.RemoveAll(dir)
	return exit, err
}

func listenQuinnCarrier(ctx context.Context, q quinnArm, addr string, o transport.Options) (ArmCarrierListener, error) {
	inner, err := quinnCarrierOptions(q, o)
	if err != nil {
		return nil, err
	}
	c, err := quinnEndConfig(ctx, q, o)
	if err != nil {
		return nil, err
	}
	l := &quinnCarrierListener{arm: q, opts: o, dir: c.Dir}
	if l.CarrierListener, err = transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", inner); err != nil {
		l.Close()
		return nil, fmt.Errorf("the %s carrier: its listener on loopback: %w", q.Name(), err)
	}
	ns, err := hookNamespace(ctx, o)
	if err != nil {
		l.Close()
		return nil, err
	}
	l.end, err = quinncarrier.StartServer(ctx, c, ns, addr, []string{l.CarrierListener.Addr().String()}, o.Certificate)
	closeNamespace(ns)
	if err == nil {
		err = checkQuinnReady(l.end.Ready(), c)
	}
	if err == nil {
		l.addr, err = net.ResolveUDPAddr("udp", l.end.Ready().QUIC)
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("the %s carrier: %w", q.Name(), err)
	}
	return l, nil
}

// Addr is the quinn server end's UDP address.
func (l *quinnCarrierListener) Addr() net.Addr { return l.addr }

// State is the quinn server end's settings, read back when it was ready,
// and its connection's statistics at exit once it has closed.
func (l *quinnCarrierListener) State() transport.State {
	in := l.CarrierListener.State()
	return quinnState(l.arm, "server", l.end.Ready(), l.exit, l.opts, in.Channels, in.Started, 0)
}

func (l *quinnCarrierListener) recordsAtExit() {}

// Close closes the listener on loopback and stops the quinn end.
func (l *quinnCarrierListener) Close() error {
	var err error
	l.once.Do(func() {
		var inner func() error
		if l.CarrierListener != nil {
			inner = l.CarrierListener.Close
		}
		l.exit, err = closeQuinnCarrier(inner, l.end, l.dir)
	})
	return err
}
