package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// An Arm is one way of carrying a workload's channels between a server and
// a client, by the name flags, matrices and records give it: a built-in arm
// (TCP, QUIC, QUICPerChannel, QUICPriority, TCPMux), "tcp-" and a
// congestion control's name (kernel TCP pinned to it, such as tcp-reno or
// tcp-quicreno), or an importer's arm added with Register. Lookup checks a
// name; an Arm's methods read the registry and never change it.
type Arm string

// The built-in arms, registered in this order.
const (
	// TCP carries each channel on its own TCP connection.
	TCP = Arm(transport.ArmTCP)
	// QUIC carries all channels as streams of one QUIC connection.
	QUIC = Arm(transport.ArmQUIC)
	// QUICPerChannel carries each channel on its own QUIC connection.
	QUICPerChannel = Arm(transport.ArmQUICPerChannel)
	// QUICPriority is QUIC with the workload's interactive channel's stream
	// sent first (unless the options choose the channel).
	QUICPriority = Arm(transport.ArmQUICPriority)
	// TCPMux carries all channels framed over one TCP connection
	// (transport.DialMux).
	TCPMux = Arm(transport.ArmTCPMux)
)

// A Transport is what an arm runs: its server side and its client side.
// Register adds one as an arm.
type Transport interface {
	// Name is the arm's name (see Register for its form).
	Name() string
	// QUIC says whether the arm carries QUIC: the matrix then asks no TCP
	// congestion control of it, checks its offload evidence, and records
	// and summaries read it as QUIC.
	QUIC() bool
	// Listen starts the server's side on addr ("ip:port"; port 0 picks a
	// free port), making its sockets with opts' hooks when they are set.
	Listen(ctx context.Context, addr string, opts transport.Options) (ArmListener, error)
	// Dial opens the client's side to addr: a session of opts.Channels
	// channels, made with opts' socket hooks when they are set.
	Dial(ctx context.Context, addr string, opts transport.Options) (ArmSession, error)
}

// ArmListener is an arm's server side: it accepts the client's session.
type ArmListener interface {
	Accept(ctx context.Context) (ArmSession, error)
	Addr() net.Addr
	Close() error
}

// ArmSession is one end of an arm's channels.
type ArmSession interface {
	// Channels are the session's channels, in the same order at both ends:
	// reliable, ordered byte streams. A channel that also has
	// SetReadDeadline(time.Time) error lets the server bound its wait for
	// the client's close.
	Channels() []io.ReadWriteCloser
	// State is what the session had in force, read when the workload ends;
	// an arm with nothing to report returns a State with Arm and Channels
	// set.
	State() transport.State
	Close() error
}

// Preparer is a Transport that sets per-run options: from the caller's
// options (Channels already set from the workload), the server's and the
// client's, such as a certificate both ends share. Arms without it get the
// caller's options at both ends.
type Preparer interface {
	Prepare(opts transport.Options, w spicelike.Config) (server, client transport.Options, err error)
}

var registry struct {
	sync.Mutex
	transports []Transport
}

func init() {
	for _, t := range []Transport{transportArm{transport.ArmTCP}, transportArm{transport.ArmQUIC},
		transportArm{transport.ArmQUICPerChannel}, transportArm{transport.ArmQUICPriority}, tcpMux{}} {
		if err := Register(t); err != nil {
			panic(err)
		}
	}
}

// armName is a registered arm's name: results.CheckArmName's rule without
// settings, starting with a letter.
var armName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// maxArmName bounds a registered arm's name, leaving room in a record's
// arm for the settings a command may add after it.
const maxArmName = 32

// ErrUnknownArm is the error, wrapped, for a name no arm has.
var ErrUnknownArm = errors.New("unknown arm")

// Register adds t as an arm every part of the comparison can take by name.
// Register it once, from an init function or first thing in main, so that
// the processes the matrix starts for each end (which re-execute the
// program) have it too. It refuses a nil Transport, an Arm (register what
// runs an arm, not its name), a malformed name and a name already
// registered. A name is lower-case letters and digits, words joined by
// single hyphens, at most 32 characters, starting with a letter.
func Register(t Transport) error {
	if t == nil {
		return errors.New("measure: Register: nil arm")
	}
	if v := reflect.ValueOf(t); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("measure: Register: a nil %T", t)
	}
	if a, ok := t.(Arm); ok {
		return fmt.Errorf("measure: Register: %q is an arm's name; register the Transport that runs it", string(a))
	}
	name := t.Name()
	if len(name) > maxArmName || !armName.MatchString(name) || results.CheckArmName(name) != nil {
		return fmt.Errorf("measure: Register: arm name %q: use lower-case letters and digits, words joined by single hyphens, at most 32 characters, starting with a letter, so that records can name it", name)
	}
	registry.Lock()
	defer registry.Unlock()
	if registered(name) != nil {
		return fmt.Errorf("measure: Register: an arm named %q is already registered", name)
	}
	registry.transports = append(registry.transports, t)
	return nil
}

// registered is the Transport registered as name, or nil. The caller holds
// the registry's lock.
func registered(name string) Transport {
	for _, t := range registry.transports {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// Lookup returns the arm named name: a registered arm, or tcp-<controller>
// (the controller's name as CheckKernelCC reads it; whether the kernel has
// it is checked where it runs). It changes nothing.
func Lookup(name string) (Arm, error) {
	if _, err := Arm(name).transport(); err != nil {
		return "", err
	}
	return Arm(name), nil
}

// transport is what runs a: its registered Transport, or kernel TCP
// pinned to a's controller.
func (a Arm) transport() (Transport, error) {
	registry.Lock()
	defer registry.Unlock()
	if t := registered(string(a)); t != nil {
		return t, nil
	}
	if cc, ok := strings.CutPrefix(string(a), "tcp-"); ok && ccName.MatchString(cc) {
		return tcpWith{cc}, nil
	}
	return nil, fmt.Errorf("%w %q: the arms are %s, or tcp-<controller> (tcp-reno, tcp-quicreno)", ErrUnknownArm, string(a), strings.Join(names(), ", "))
}

// Name is the arm's name, as flags and records spell it.
func (a Arm) Name() string { return string(a) }

// QUIC reports whether the arm carries QUIC: a built-in QUIC arm, or a
// registered arm whose Transport says so. An unknown arm does not.
func (a Arm) QUIC() bool {
	t, err := a.transport()
	return err == nil && t.QUIC()
}

// CellCC reports whether the arm runs the cell's congestion control (as
// kernel TCP does) rather than one of its own: every arm that is not QUIC,
// and a QUIC arm whose Transport has a method CellCC returning true.
func (a Arm) CellCC() bool {
	t, err := a.transport()
	if err != nil {
		return false
	}
	if c, ok := t.(interface{ CellCC() bool }); ok {
		return c.CellCC()
	}
	return !t.QUIC()
}

// Available is why the arm cannot run on this machine, or nil: an unknown
// arm, or a registered Transport's own method Available failing (a
// program it needs is missing, say).
func (a Arm) Available(ctx context.Context) error {
	t, err := a.transport()
	if err != nil {
		return err
	}
	if c, ok := t.(interface{ Available(context.Context) error }); ok {
		return c.Available(ctx)
	}
	return nil
}

// PinnedCC returns the congestion control the arm pins (tcp-<controller>),
// and false for every other arm, an importer's registered arm named
// tcp-something among them.
func (a Arm) PinnedCC() (string, bool) {
	t, err := a.transport()
	if err != nil {
		return "", false
	}
	w, ok := t.(tcpWith)
	return w.cc, ok
}

// Listen starts the arm's server side (see Transport).
func (a Arm) Listen(ctx context.Context, addr string, o transport.Options) (ArmListener, error) {
	t, err := a.transport()
	if err != nil {
		return nil, err
	}
	return t.Listen(ctx, addr, o)
}

// Dial opens the arm's client side (see Transport).
func (a Arm) Dial(ctx context.Context, addr string, o transport.Options) (ArmSession, error) {
	t, err := a.transport()
	if err != nil {
		return nil, err
	}
	return t.Dial(ctx, addr, o)
}

// ArmNames returns the registered arms' names in the order they were
// registered: the built-in ones first. Summaries list arms in this order.
func ArmNames() []string {
	registry.Lock()
	defer registry.Unlock()
	return names()
}

// names are the registered arms' names; the caller holds the lock.
func names() []string {
	out := make([]string, len(registry.transports))
	for i, t := range registry.transports {
		out[i] = t.Name()
	}
	return out
}

// transportArm is one of package transport's arms as a Transport. It
// prepares each run's options as transport needs: a fresh certificate for
// the QUIC arms when the options carry none (the client gets its public
// half), and for quic-priority the workload's interactive channel as the
// one to prioritise unless the options set Priority.
type transportArm struct{ arm transport.Arm }

func (t transportArm) Name() string { return string(t.arm) }

func (t transportArm) QUIC() bool { return t.arm.IsQUIC() }

func (t transportArm) Listen(ctx context.Context, addr string, o transport.Options) (ArmListener, error) {
	ln, err := transport.Listen(ctx, t.arm, addr, o)
	if err != nil {
		return nil, err
	}
	return transportListener{ln}, nil
}

func (t transportArm) Dial(ctx context.Context, addr string, o transport.Options) (ArmSession, error) {
	s, err := transport.Dial(ctx, t.arm, addr, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (t transportArm) Prepare(o transport.Options, w spicelike.Config) (server, client transport.Options, err error) {
	if t.arm == transport.ArmQUICPriority && !o.Priority {
		o.PriorityChannel = -1
		for i, ch := range w.Channels {
			if ch.Role == spicelike.Interactive {
				o.PriorityChannel = i
			}
		}
		if o.PriorityChannel < 0 {
			return server, client, fmt.Errorf("the %s arm prioritises the workload's interactive channel, and it has none: "+
				"add one, or set transport.Options.Priority and PriorityChannel to choose the channel", t.arm)
		}
	}
	server, client = o, o
	if t.arm.IsQUIC() {
		cert := o.Certificate
		if len(cert.CertPEM) == 0 && len(cert.KeyPEM) == 0 {
			if cert, err = transport.NewCertificate(); err != nil {
				return server, client, err
			}
		}
		server.Certificate, client.Certificate = cert, cert.ClientOnly()
	}
	return server, client, nil
}

type transportListener struct{ *transport.Listener }

func (l transportListener) Accept(ctx context.Context) (ArmSession, error) {
	s, err := l.Listener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// tcpMux is the tcp-mux arm: transport's DialMux and ListenMux.
type tcpMux struct{}

func (tcpMux) Name() string { return string(transport.ArmTCPMux) }

func (tcpMux) QUIC() bool { return false }

func (tcpMux) Listen(ctx context.Context, addr string, o transport.Options) (ArmListener, error) {
	l, err := transport.ListenMux(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return muxListener{l}, nil
}

func (tcpMux) Dial(ctx context.Context, addr string, o transport.Options) (ArmSession, error) {
	s, err := transport.DialMux(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

type muxListener struct{ *transport.MuxListener }

func (l muxListener) Accept(ctx context.Context) (ArmSession, error) {
	s, err := l.MuxListener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// PrepareOptions returns the server's and the client's transport options
// for one run of arm carrying w, from the caller's o: Channels set from the
// workload (o.Channels must be 0 or agree), then the arm's own preparation
// (see Preparer). Run calls it; code that runs each end in a process of
// its own calls it once and hands each end its half.
func PrepareOptions(arm Arm, w spicelike.Config, o transport.Options) (server, client transport.Options, err error) {
	if arm == "" {
		return server, client, errors.New("no arm given: use one of measure.ArmNames(), or measure.Lookup(name)")
	}
	t, err := arm.transport()
	if err != nil {
		return server, client, err
	}
	if err := w.Validate(); err != nil {
		return server, client, fmt.Errorf("the workload: %w", err)
	}
	if o.Channels != 0 && o.Channels != len(w.Channels) {
		return server, client, fmt.Errorf("transport.Options.Channels is %d but the workload has %d channels: leave Channels 0 and it is set from the workload",
			o.Channels, len(w.Channels))
	}
	o.Channels = len(w.Channels)
	if p, ok := t.(Preparer); ok {
		return p.Prepare(o, w)
	}
	return o, o, nil
}

// tcpWith is the tcp arm with its congestion control pinned to cc whatever
// the caller's options say, named "tcp-" + cc, so that several controllers
// run side by side, as arms, in one cell of a matrix.
type tcpWith struct{ cc string }

func (t tcpWith) Name() string { return "tcp-" + t.cc }

func (tcpWith) QUIC() bool { return false }

func (t tcpWith) Listen(ctx context.Context, addr string, o transport.Options) (ArmListener, error) {
	o.CongestionControl = t.cc
	ln, err := TCP.Listen(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return tcpWithListener{ln, t.Name()}, nil
}

func (t tcpWith) Dial(ctx context.Context, addr string, o transport.Options) (ArmSession, error) {
	o.CongestionControl = t.cc
	s, err := TCP.Dial(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return tcpWithSession{s, t.Name()}, nil
}

func (t tcpWith) Prepare(o transport.Options, _ spicelike.Config) (server, client transport.Options, err error) {
	o.CongestionControl = t.cc
	return o, o, nil
}

type tcpWithListener struct {
	ArmListener
	name string
}

func (l tcpWithListener) Accept(ctx context.Context) (ArmSession, error) {
	s, err := l.ArmListener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return tcpWithSession{s, l.name}, nil
}

// tcpWithSession reports the arm's own name in its State.
type tcpWithSession struct {
	ArmSession
	name string
}

func (s tcpWithSession) State() transport.State {
	st := s.ArmSession.State()
	st.Arm = transport.Arm(s.name)
	return st
}

// ccName is a kernel congestion control's name that an arm's name and a
// record can carry (no underscores: results refuse them in arm names).
var ccName = regexp.MustCompile(`^[a-z][a-z0-9]{0,14}$`)

// CheckKernelCC says why kernel TCP could not run congestion control cc
// here: cc is not a controller's name, or the kernel does not list it
// (tcp_available_congestion_control). A BPF controller such as quicreno
// is checked by whoever loads it.
func CheckKernelCC(cc string) error {
	if !ccName.MatchString(cc) {
		return fmt.Errorf("%q is not a TCP congestion control's name: give reno, cubic, bbr or another the kernel lists (tcp_available_congestion_control)", cc)
	}
	return transport.CheckCongestionControl(cc)
}
