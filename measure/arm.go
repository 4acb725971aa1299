package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// Arm is one way of carrying a workload's channels between a server and a
// client. The built-in arms (TCP, QUIC, QUICPerChannel, QUICPriority,
// then TCPMux) are registered by this package; an importer registers its own
// with Register, and every part of the comparison (Run, the matrix in
// package bench, the summary) then takes it by name.
type Arm interface {
	// Name identifies the arm in flags, run records and summaries: lower
	// case letters, digits and '-', starting with a letter.
	Name() string
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

// QUICArm is an Arm that says whether it carries QUIC. The comparison
// treats the runs of an arm whose QUIC is true as the built-in QUIC arms':
// no TCP congestion control is asked of it (the QUIC stack has its own),
// its offload evidence is checked, its records say QUIC, and the summary
// reads it as QUIC. An arm without the method is taken as TCP-like.
type QUICArm interface {
	Arm
	QUIC() bool
}

// An ArmName is the name an arm is registered under (Register): a built-in
// transport arm's (transport.ArmTCP, ...), tcp-mux, tcp-<controller>, or an
// importer's own. A matrix names its arms by it; Lookup finds the arm.
type ArmName string

// QUIC reports whether the arm named n carries QUIC (IsQUIC).
func (n ArmName) QUIC() bool { return IsQUIC(string(n)) }

// IsQUIC reports whether the arm named name carries QUIC: a built-in QUIC
// arm, or a registered QUICArm whose QUIC is true.
func IsQUIC(name string) bool {
	if transport.Arm(name).IsQUIC() {
		return true
	}
	a, err := Lookup(name)
	if err != nil {
		return false
	}
	q, ok := a.(QUICArm)
	return ok && q.QUIC()
}

// Preparer is an Arm that sets per-run options: from the caller's options
// (Channels already set from the workload), the server's and the client's,
// such as a certificate both ends share. Arms without it get the caller's
// options at both ends.
type Preparer interface {
	Prepare(opts transport.Options, w spicelike.Config) (server, client transport.Options, err error)
}

// The built-in arms, registered in this order.
var (
	// TCP carries each channel on its own TCP connection.
	TCP = Transport(transport.ArmTCP)
	// QUIC carries all channels as streams of one QUIC connection.
	QUIC = Transport(transport.ArmQUIC)
	// QUICPerChannel carries each channel on its own QUIC connection.
	QUICPerChannel = Transport(transport.ArmQUICPerChannel)
	// QUICPriority is QUIC with the workload's interactive channel's stream
	// sent first (unless the options choose the channel).
	QUICPriority = Transport(transport.ArmQUICPriority)
	// TCPMux carries all channels framed over one TCP connection
	// (transport.ArmTCPMux, transport.DialMux).
	TCPMux Arm = tcpMux{}
)

var registry struct {
	sync.Mutex
	arms []Arm
}

func init() {
	for _, a := range []Arm{TCP, QUIC, QUICPerChannel, QUICPriority, TCPMux} {
		if err := Register(a); err != nil {
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

// ErrUnknownArm is returned, wrapped, by Lookup for a name no arm has.
var ErrUnknownArm = errors.New("unknown arm")

// Register adds a to the arms every part of the comparison can take by
// name. Register it once, from an init function or first thing in main, so
// that the processes the matrix starts for each end (which re-execute the
// program) have it too. It refuses a nil arm, a malformed name and a name
// already registered.
func Register(a Arm) error {
	if a == nil {
		return errors.New("measure: Register: nil arm")
	}
	if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("measure: Register: a nil %T", a)
	}
	name := a.Name()
	if len(name) > maxArmName || !armName.MatchString(name) || results.CheckArmName(name) != nil {
		return fmt.Errorf("measure: Register: arm name %q: use lower-case letters and digits, words joined by single hyphens, at most 32 characters, starting with a letter, so that records can name it", name)
	}
	registry.Lock()
	defer registry.Unlock()
	for _, b := range registry.arms {
		if b.Name() == name {
			return fmt.Errorf("measure: Register: an arm named %q is already registered", name)
		}
	}
	registry.arms = append(registry.arms, a)
	return nil
}

// Lookup returns the registered arm named name.
func Lookup(name string) (Arm, error) {
	registry.Lock()
	defer registry.Unlock()
	for _, a := range registry.arms {
		if a.Name() == name {
			return a, nil
		}
	}
	if cc, ok := strings.CutPrefix(name, "tcp-"); ok && ccName.MatchString(cc) {
		// "tcp-<controller>": made on first use, then listed like any arm.
		a := TCPWith(cc)
		registry.arms = append(registry.arms, a)
		return a, nil
	}
	return nil, fmt.Errorf("%w %q: the arms are %s, or tcp-<controller> (tcp-reno, tcp-quicreno)", ErrUnknownArm, name, strings.Join(names(registry.arms), ", "))
}

// Arms returns the registered arms in the order they were registered: the
// built-in ones first. Summaries list arms in this order.
func Arms() []Arm {
	registry.Lock()
	defer registry.Unlock()
	return slices.Clone(registry.arms)
}

// ArmNames returns the registered arms' names, in Arms' order.
func ArmNames() []string {
	registry.Lock()
	defer registry.Unlock()
	return names(registry.arms)
}

func names(arms []Arm) []string {
	out := make([]string, len(arms))
	for i, a := range arms {
		out[i] = a.Name()
	}
	return out
}

// Transport returns package transport's arm a as an Arm. It prepares each
// run's options as transport needs: a fresh certificate for the QUIC arms
// when the options carry none (the client gets its public half), and for
// transport.ArmQUICPriority the workload's interactive channel as the one
// to prioritise unless the options set Priority.
func Transport(a transport.Arm) Arm { return transportArm{a} }

type transportArm struct{ arm transport.Arm }

func (t transportArm) Name() string { return string(t.arm) }

// QUIC reports whether the transport arm is one of the QUIC ones.
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
	if _, err := transport.ParseArm(string(t.arm)); err != nil {
		return server, client, err
	}
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

// tcpMux is the tcp-mux arm: transport's DialMux and ListenMux as an Arm.
type tcpMux struct{}

func (tcpMux) Name() string { return string(transport.ArmTCPMux) }

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
	if arm == nil {
		return server, client, errors.New("no arm given: use one of measure.Arms(), or measure.Lookup(name)")
	}
	if err := w.Validate(); err != nil {
		return server, client, fmt.Errorf("the workload: %w", err)
	}
	if o.Channels != 0 && o.Channels != len(w.Channels) {
		return server, client, fmt.Errorf("transport.Options.Channels is %d but the workload has %d channels: leave Channels 0 and it is set from the workload",
			o.Channels, len(w.Channels))
	}
	o.Channels = len(w.Channels)
	if p, ok := arm.(Preparer); ok {
		return p.Prepare(o, w)
	}
	return o, o, nil
}

// TCPWith returns the tcp arm with its congestion control pinned to cc
// whatever the caller's options say, named "tcp-" + cc ("tcp-reno",
// "tcp-quicreno"), so that several controllers run side by side, as arms,
// in one cell of a matrix. Lookup makes one for any such name, so it need
// not be registered.
func TCPWith(cc string) Arm { return tcpWith{cc} }

type tcpWith struct{ cc string }

func (t tcpWith) Name() string { return "tcp-" + t.cc }

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

func (t tcpWith) Prepare(o transport.Options, _ spicelike.Config) (server, client transport.Options, err error) {
	o.CongestionControl = t.cc
	return o, o, nil
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

// PinnedCC returns the congestion control an arm named name pins
// (TCPWith's), and false for every other arm, an importer's registered
// arm named tcp-something among them.
func PinnedCC(name string) (string, bool) {
	cc, ok := strings.CutPrefix(name, "tcp-")
	if !ok || name == TCPMux.Name() || !ccName.MatchString(cc) {
		return "", false
	}
	registry.Lock()
	defer registry.Unlock()
	for _, a := range registry.arms {
		if a.Name() == name {
			_, ours := a.(tcpWith)
			return cc, ours
		}
	}
	return cc, true
}
