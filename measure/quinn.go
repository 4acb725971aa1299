package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	for _, t := range []Transport{quinnArm{}, quinnArm{priority: true}} {
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
	l := &quinnListener{arm: q, opts: o, dir: c.Dir}
	listen := o.Listen
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	targets := make([]string, o.Channels)
	for i := range targets {
		tl, err := listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("the %s arm: a local listener for channel %d: %w", q.Name(), i, err)
		}
		l.targets = append(l.targets, tl)
		targets[i] = tl.Addr().String()
	}
	ns, err := hookNamespace(ctx, o)
	if err != nil {
		l.Close()
		return nil, err
	}
	l.end, err = quinncarrier.StartServer(ctx, c, ns, addr, targets, o.Certificate)
	closeNamespace(ns)
	if err != nil {
		l.Close()
		return nil, err
	}
	if err := checkQuinnReady(l.end.Ready(), c); err != nil {
		l.Close()
		return nil, err
	}
	if l.addr, err = net.ResolveUDPAddr("udp", l.end.Ready().QUIC); err != nil {
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
	s := &quinnSession{arm: q, role: "client", opts: o, dir: c.Dir, started: time.Now()}
	ns, err := hookNamespace(ctx, o)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.end, err = quinncarrier.StartClient(ctx, c, ns, addr, "127.0.0.1", o.Channels, o.Certificate)
	closeNamespace(ns)
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := checkQuinnReady(s.end.Ready(), c); err != nil {
		s.Close()
		return nil, err
	}
	dial := o.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	for i, a := range s.end.Ready().Channels {
		conn, err := dial(ctx, "tcp", a)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("the %s arm: channel %d's local address %s: %w", q.Name(), i, a, err)
		}
		s.chans = append(s.chans, conn)
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

// quinnListener is the quinn server end and one local listener per
// channel, whose connections it makes.
type quinnListener struct {
	arm     quinnArm
	opts    transport.Options
	dir     string
	targets []net.Listener
	end     *quinncarrier.End
	addr    net.Addr
	once    sync.Once
}

func (l *quinnListener) Addr() net.Addr { return l.addr }

// Accept waits for one connection on every channel's listener: the
// client's session.
func (l *quinnListener) Accept(ctx context.Context) (ArmSession, error) {
	s := &quinnSession{arm: l.arm, role: "server", opts: l.opts, end: l.end, chans: make([]net.Conn, len(l.targets))}
	errs := make([]error, len(l.targets))
	var wg sync.WaitGroup
	for i, tl := range l.targets {
		wg.Go(func() { s.chans[i], errs[i] = tl.Accept() })
	}
	stop := context.AfterFunc(ctx, func() {
		for _, tl := range l.targets {
			tl.Close()
		}
	})
	wg.Wait()
	stop()
	if err := errors.Join(errs...); err != nil {
		for _, c := range s.chans {
			if c != nil {
				c.Close()
			}
		}
		return nil, fmt.Errorf("the %s arm: accepting the channels: %w", l.arm.Name(), err)
	}
	s.started = time.Now()
	s.onClose = l.Close
	return s, nil
}

// Close stops the server end and closes the listeners.
func (l *quinnListener) Close() error {
	var err error
	l.once.Do(func() {
		for _, tl := range l.targets {
			tl.Close()
		}
		if l.end != nil {
			_, err = l.end.Stop()
		}
		os.RemoveAll(l.dir)
	})
	return err
}

// quinnSession is one end's channels: TCP connections to (client) or
// from (server) its quinn end.
type quinnSession struct {
	arm     quinnArm
	role    string
	opts    transport.Options
	dir     string
	end     *quinncarrier.End
	chans   []net.Conn
	started time.Time
	connect time.Duration
	onClose func() error
	once    sync.Once
}

func (s *quinnSession) Channels() []io.ReadWriteCloser {
	out := make([]io.ReadWriteCloser, len(s.chans))
	for i, c := range s.chans {
		out[i] = c
	}
	return out
}

// State is the end's settings as quinn read them back when it was ready.
func (s *quinnSession) State() transport.State {
	return quinnState(s.arm, s.role, s.end.Ready(), s.opts, len(s.chans), s.started, s.connect)
}

// quinnState is what an end of arm that printed r has in force, with
// options o and channels channels.
func quinnState(arm quinnArm, role string, r quinncarrier.Ready, o transport.Options, channels int, started time.Time, connect time.Duration) transport.State {
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
	if c := r.Connection; c != nil {
		qc.RemoteAddr = c.Remote
		qc.Stats = transport.QUICStats{CongestionWindow: c.Cwnd, SmoothedRTT: time.Duration(c.RTTMicros) * time.Microsecond,
			PacketsSent: c.SentPackets, PacketsLost: c.LostPackets, BytesLost: c.LostBytes}
	}
	st.QUIC = []transport.QUICConnState{qc}
	return st
}

// Close closes the channels and stops the end.
func (s *quinnSession) Close() error {
	var err error
	s.once.Do(func() {
		for _, c := range s.chans {
			c.Close()
		}
		if s.onClose != nil {
			err = s.onClose()
			return
		}
		if s.end != nil {
			_, err = s.end.Stop()
		}
		os.RemoveAll(s.dir)
	})
	return err
}
