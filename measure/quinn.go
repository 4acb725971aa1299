package measure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// The quinn arms: the workload's channels carried by quinn (Rust) through
// the quicbench-quinn carrier, each channel's TCP connection as one stream
// of one quinn connection (docs/quinn.md).
const (
	// Quinn is quinn with every stream at the same priority.
	Quinn = Arm("quinn")
	// QuinnPriority is Quinn with the workload's interactive channel's
	// stream sent first (unless the options choose the channel).
	QuinnPriority = Arm("quinn-priority")
)

func init() {
	for _, t := range []Transport{quinnArm{}, quinnArm{priority: true}, quicCarrierArm{}} {
		if err := Register(t); err != nil {
			panic(err)
		}
	}
}

// quinnCC maps the run's controller names (the TCP arm's cell names) to
// quinn's; "" is quinn's default, cubic.
var quinnCC = map[string]string{"": "cubic", "cubic": "cubic", "reno": "newreno", "newreno": "newreno", "bbr": "bbr"}

// quinnArm runs the quinn carrier's ends in the calling process's network
// namespace, each dying with the process. With pin set (a key of quinnCC)
// it is quinn-<pin>: quinn on that controller whatever the cell's.
type quinnArm struct {
	priority bool
	pin      string
}

func (q quinnArm) Name() string {
	switch {
	case q.pin != "":
		return "quinn-" + q.pin
	case q.priority:
		return string(QuinnPriority)
	}
	return string(Quinn)
}

func (quinnArm) QUIC() bool { return true }

// CellCC says the cell's congestion control picks quinn's controller
// (quinnCC), unless the arm pins its own.
func (q quinnArm) CellCC() bool { return q.pin == "" }

// pinnedQuinn is the quinn-<controller> arm named name, if it is one;
// an error when name is quinn- and something quinn does not run.
func pinnedQuinn(name string) (quinnArm, bool, error) {
	cc, ok := strings.CutPrefix(name, "quinn-")
	if !ok {
		return quinnArm{}, false, nil
	}
	if _, known := quinnCC[cc]; !known || cc == "" {
		return quinnArm{}, false, fmt.Errorf("%w %q: quinn's controllers are quinn-cubic, quinn-newreno (or quinn-reno) and quinn-bbr", ErrUnknownArm, name)
	}
	return quinnArm{pin: cc}, true, nil
}

// controller is quinn's controller for a run with options o: the arm's
// own, or the cell's (o.CongestionControl).
func (q quinnArm) controller(o transport.Options) (string, error) {
	cc := o.CongestionControl
	if q.pin != "" {
		cc = q.pin
	}
	name, ok := quinnCC[cc]
	if !ok {
		return "", fmt.Errorf("the %s arm runs quinn's cubic, newreno (reno) or bbr, not %q", q.Name(), cc)
	}
	return name, nil
}

// Available is why the carrier program cannot be had, or nil.
func (quinnArm) Available(ctx context.Context) error {
	_, err := quinnBinary(ctx)
	return err
}

// carrierBinary finds or builds the carrier program (a test replaces it).
var carrierBinary = quinncarrier.Binary

// quinnBinary is the carrier program, or an error that says how to get it.
func quinnBinary(ctx context.Context) (string, error) {
	bin, err := carrierBinary(ctx)
	if errors.Is(err, quinncarrier.ErrUnavailable) {
		return "", fmt.Errorf("the quinn arms need the quicbench-quinn program, built from Debian's packaged crates "+
			"(see docs/quinn.md, \"Building it\"), or $%s naming one: %w", quinncarrier.BinaryEnv, err)
	}
	return bin, err
}

func (q quinnArm) Prepare(o transport.Options, w spicelike.Config) (server, client transport.Options, err error) {
	if q.pin != "" {
		o.CongestionControl = q.pin
	}
	if _, err := q.controller(o); err != nil {
		return server, client, err
	}
	if q.priority && !o.Priority {
		o.Priority, o.PriorityChannel = true, -1
		for i, ch := range w.Channels {
			if ch.Role == spicelike.Interactive {
				o.PriorityChannel = i
			}
		}
		if o.PriorityChannel < 0 {
			return server, client, fmt.Errorf("the %s arm prioritises the workload's interactive channel, and it has none: "+
				"add one, or set transport.Options.Priority and PriorityChannel to choose the channel", q.Name())
		}
	}
	cert := o.Certificate
	if len(cert.CertPEM) == 0 && len(cert.KeyPEM) == 0 {
		if cert, err = quinncarrier.NewCertificate(); err != nil {
			return server, client, err
		}
	}
	server, client = o, o
	server.Certificate, client.Certificate = cert, cert.ClientOnly()
	return server, client, nil
}

// config is the carrier's configuration for o, in a directory of its own.
func (q quinnArm) config(ctx context.Context, o transport.Options) (quinncarrier.Config, error) {
	var c quinncarrier.Config
	cc, err := q.controller(o)
	if err != nil {
		return c, err
	}
	if o.Channels <= 0 {
		return c, fmt.Errorf("the %s arm needs transport.Options.Channels (measure.PrepareOptions sets it from the workload)", q.Name())
	}
	if o.Priority {
		if o.PriorityChannel < 0 || o.PriorityChannel >= o.Channels {
			return c, fmt.Errorf("the %s arm: PriorityChannel %d is not one of the %d channels", q.Name(), o.PriorityChannel, o.Channels)
		}
		c.Priorities = make([]int, o.Channels)
		c.Priorities[o.PriorityChannel] = 1
	}
	if len(o.Certificate.CertPEM) == 0 {
		return c, fmt.Errorf("the %s arm needs a certificate: get the options from measure.PrepareOptions", q.Name())
	}
	bin, err := quinnBinary(ctx)
	if err != nil {
		return c, err
	}
	dir, err := os.MkdirTemp("", "quicbench-quinn-")
	if err != nil {
		return c, err
	}
	c.Controller, c.Binary, c.Dir = cc, bin, dir
	return c, nil
}

func (q quinnArm) Listen(ctx context.Context, addr string, o transport.Options) (ArmListener, error) {
	c, err := q.config(ctx, o)
	if err != nil {
		return nil, err
	}
	e := &quinnEnd{arm: q, opts: o, dir: c.Dir}
	l := &carriedListener{arm: q.Name(), end: e}
	if l.targets, err = localListeners(ctx, q.Name(), o, o.Channels); err != nil {
		e.stop()
		return nil, err
	}
	ns, err := hookNamespace(ctx, o)
	if err != nil {
		l.Close()
		return nil, err
	}
	e.end, err = quinncarrier.StartServer(ctx, c, ns, addr, listenerAddrs(l.targets), o.Certificate)
	closeNamespace(ns)
	if err != nil {
		l.Close()
		return nil, err
	}
	if err := checkQuinnReady(e.end.Ready(), c); err != nil {
		l.Close()
		return nil, err
	}
	if l.addr, err = net.ResolveUDPAddr("udp", e.end.Ready().QUIC); err != nil {
		l.Close()
		return nil, fmt.Errorf("the %s arm: the server end's address: %w", q.Name(), err)
	}
	return l, nil
}

func (q quinnArm) Dial(ctx context.Context, addr string, o transport.Options) (ArmSession, error) {
	c, err := q.config(ctx, o)
	if err != nil {
		return nil, err
	}
	e := &quinnEnd{arm: q, opts: o, dir: c.Dir}
	s := &carriedSession{arm: q.Name(), role: "client", end: e, started: time.Now()}
	ns, err := hookNamespace(ctx, o)
	if err != nil {
		s.Close()
		return nil, err
	}
	e.end, err = quinncarrier.StartClient(ctx, c, ns, addr, "127.0.0.1", o.Channels, o.Certificate)
	closeNamespace(ns)
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := checkQuinnReady(e.end.Ready(), c); err != nil {
		s.Close()
		return nil, err
	}
	if s.chans, err = dialLocal(ctx, q.Name(), o, e.end.Ready().Channels); err != nil {
		s.Close()
		return nil, err
	}
	s.connect = time.Since(s.started)
	return s, nil
}

// hookNamespace is the network namespace o's ListenPacket hook makes its
// sockets in, where the end must run; nil without a hook (the calling
// thread's).
func hookNamespace(ctx context.Context, o transport.Options) (*quinncarrier.SocketNamespace, error) {
	if o.ListenPacket == nil {
		return nil, nil
	}
	pc, err := o.ListenPacket(ctx, "udp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the quinn arm: a socket from the ListenPacket hook, to find its namespace: %w", err)
	}
	defer pc.Close()
	sc, ok := pc.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("the quinn arm: the ListenPacket hook made a %T, which has no descriptor to find its namespace by", pc)
	}
	return quinncarrier.NamespaceOf(sc)
}

func closeNamespace(ns *quinncarrier.SocketNamespace) {
	if ns != nil {
		ns.Close()
	}
}

// checkQuinnReady fails an end that reports another controller, offload
// or datagram size than c asked for.
func checkQuinnReady(r quinncarrier.Ready, c quinncarrier.Config) error {
	s := r.Settings
	if s.CC != c.Controller || s.Controller != c.Controller {
		return fmt.Errorf("the quinn %s end runs controller %q (%s), not %q", r.Role, s.CC, s.Controller, c.Controller)
	}
	if s.Segmentation != "off" {
		return fmt.Errorf("the quinn %s end reports segmentation %q, not off", r.Role, s.Segmentation)
	}
	if s.PMTUD {
		return fmt.Errorf("the quinn %s end reports path MTU discovery on", r.Role)
	}
	return nil
}

// quinnEnd is one quinn end of a session or listener, in a directory of
// its own.
type quinnEnd struct {
	arm  quinnArm
	opts transport.Options
	dir  string
	end  *quinncarrier.End
	once sync.Once
	err  error
	exit *quinncarrier.EndStats
}

// stop stops the end, keeps what it recorded and removes its directory.
func (e *quinnEnd) stop() error {
	e.once.Do(func() {
		if e.end != nil {
			st, err := e.end.Stop()
			if err == nil {
				e.exit = &st
			}
			e.err = err
		}
		os.RemoveAll(e.dir)
	})
	return e.err
}

// state is the end's settings as quinn read them back when it was ready,
// and its connection's statistics: at exit once the end has stopped, else
// the client's just after the handshake.
func (e *quinnEnd) state(st *transport.State) {
	*st = quinnState(e.arm, st.Role, e.end.Ready(), e.exit, e.opts, st.Channels, st.Started, st.ConnectTime)
}

// quinnState is what an end of arm that printed r (and exit, once it has
// stopped) has in force, with options o and channels channels.
func quinnState(arm quinnArm, role string, r quinncarrier.Ready, exit *quinncarrier.EndStats, o transport.Options, channels int, started time.Time, connect time.Duration) transport.State {
	set := r.Settings
	st := transport.State{
		Arm: transport.Arm(arm.Name()), Role: role, Channels: channels, Started: started, ConnectTime: connect,
		CongestionControl: "quinn-" + set.CC, RequestedCongestionControl: o.CongestionControl,
	}
	if o.Priority {
		st.Priority = &transport.PriorityState{Channel: o.PriorityChannel, Urgency: 1, OthersUrgency: 0}
	}
	qc := transport.QUICConnState{
		LocalAddr: r.QUIC, RemoteAddr: r.Server, CongestionControl: set.Controller, GSO: set.Segmentation != "off",
		QUICVersion: "quinn " + set.Quinn, TLSVersion: set.TLS, ALPN: set.ALPN,
		ConfiguredPacketSize: set.Datagram, PathMTUDiscovery: set.PMTUD,
		MaxConnectionReceiveWindow: set.ConnectionWindow, MaxStreamReceiveWindow: set.StreamWindow,
	}
	for i := range channels {
		qc.Channels = append(qc.Channels, i)
	}
	c := r.Connection
	if exit != nil && len(exit.Connections) > 0 {
		c = &exit.Connections[0]
	}
	if c != nil {
		qc.RemoteAddr = c.Remote
		qc.Stats = transport.QUICStats{CongestionWindow: c.Cwnd, SmoothedRTT: time.Duration(c.RTTMicros) * time.Microsecond,
			PacketsSent: c.SentPackets, PacketsLost: c.LostPackets, BytesLost: c.LostBytes,
			BytesSent: c.UDPTx.Bytes, BytesReceived: c.UDPRx.Bytes, PacketsReceived: c.UDPRx.Datagrams}
	}
	st.QUIC = []transport.QUICConnState{qc}
	return st
}

// exited puts the statistics the end recorded at exit in st, once it has
// stopped and they were read.
func (e *quinnEnd) exited(st *transport.State) {
	if e.exit != nil {
		e.state(st)
	}
}
