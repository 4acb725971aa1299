package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// ALPN is the TLS application protocol both QUIC arms negotiate. A peer that
// offers anything else is refused during the handshake.
const ALPN = "quicbench/1"

// ServerName is the TLS server name the QUIC client asks for and that every
// certificate made by NewCertificate carries, so a client verifies the
// server whatever address it dialled (loopback, or a namespace's address).
const ServerName = "quicbench.invalid"

// Fixed QUIC settings, the same for both QUIC arms and both ends. They are the
// values the headline pins on both arms; State records what the connection
// actually used.
const (
	// DatagramSize is the UDP payload size of every full QUIC packet
	// (quic.Config.InitialPacketSize) with path MTU discovery off, unless
	// Options.PacketSize sets another between MinPacketSize and
	// MaxPacketSize.
	DatagramSize  = 1400
	MinPacketSize = 1200 // QUIC's smallest (RFC 9000, section 14)
	MaxPacketSize = 1452 // quic-go's largest
	// MaxVirtualPacketSize is the largest packet size the QUIC arms take
	// inside a testing/synctest bubble (see Options.PacketSize).
	MaxVirtualPacketSize = 1280
	// ConnectionReceiveWindow is the QUIC connection-level flow control
	// window, initial and maximum.
	ConnectionReceiveWindow = 16 << 20
	// StreamReceiveWindow is the QUIC stream-level flow control window,
	// initial and maximum.
	StreamReceiveWindow = 8 << 20
)

// QUICCongestionControl is what State reports as the QUIC arms' congestion
// controller: quic-go's NewReno (RFC 9002), which cannot be replaced
// (docs/controllers.md compares it with the kernel's).
const QUICCongestionControl = "newreno (quic-go, fixed)"

// Arm names one way of carrying N channels between two endpoints.
type Arm string

const (
	// ArmTCP carries each channel on its own TCP connection.
	ArmTCP Arm = "tcp"
	// ArmQUIC carries all channels as bidirectional streams of one QUIC
	// connection.
	ArmQUIC Arm = "quic"
	// ArmQUICPerChannel carries each channel on its own QUIC connection with
	// one stream: a handshake and a congestion window per channel.
	ArmQUICPerChannel Arm = "quic-per-channel"
	// ArmQUICPriority is ArmQUIC with channel Options.PriorityChannel's
	// stream sent before the others (Options.Priority, set for it). Both
	// ends must use it for the priority to hold in both directions.
	ArmQUICPriority Arm = "quic-priority"
)

// arms lists the arms Listen and Dial take, in a stable order.
func arms() []Arm { return []Arm{ArmTCP, ArmQUIC, ArmQUICPerChannel, ArmQUICPriority} }

// ParseArm returns the arm named s, or an error listing the valid names.
func ParseArm(s string) (Arm, error) {
	for _, a := range arms() {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("transport: unknown arm %q: want one of %s", s, armList())
}

// quicArmList names the QUIC arms: "quic, quic-per-channel and quic-priority".
func quicArmList() string {
	var names []string
	for _, a := range arms() {
		if a.IsQUIC() {
			names = append(names, string(a))
		}
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func armList() string {
	var names []string
	for _, a := range arms() {
		names = append(names, string(a))
	}
	return strings.Join(names, ", ")
}

// IsQUIC reports whether the arm carries its channels over QUIC (and so
// has a datagram size, a GSO state and quic-go's congestion control).
func (a Arm) IsQUIC() bool { return a == ArmQUIC || a == ArmQUICPerChannel || a == ArmQUICPriority }

// connections is the arm that builds the connections, with the options it
// needs: ArmQUICPriority is ArmQUIC with Priority set.
func (a Arm) connections(o Options) (Arm, Options) {
	if a == ArmQUICPriority {
		o.Priority = true
		return ArmQUIC, o
	}
	return a, o
}

// Default timeouts used when the corresponding Options field is zero.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
	DefaultKeepAlive        = 5 * time.Second
)

// Default bounds of what a carrier listener holds (Options.CarrierLimit,
// CarrierPeerLimit). A tcp-arm channel that a tunnel relays holds two file
// descriptors, so the defaults fit under the common limit of 1024.
const (
	DefaultCarrierLimit     = 256
	DefaultCarrierPeerLimit = 64
)

// MaxChannels is the largest number of channels a session may have. The
// channel header carries the index in one byte.
const MaxChannels = 255

// Options configures both ends of a session. Server and client must agree on
// Channels; the other fields apply to the end they are given to. The zero
// value is not usable (Channels must be set) but every other field's zero
// value is the safe default: host-default TCP congestion control, no
// TCP_NOTSENT_LOWAT, segmentation offload off (the wrapper on), no stream
// priority, no qlog files, no periodic TCP_INFO.
type Options struct {
	// Channels is the number of channels in a session, 1..MaxChannels.
	Channels int

	// CongestionControl is the TCP congestion control algorithm set with
	// TCP_CONGESTION on every socket of the tcp arm, e.g. "reno", "cubic",
	// "bbr". Empty means the host default, which is recorded, not assumed.
	// An algorithm missing from tcp_available_congestion_control is refused.
	// The QUIC arms refuse it (Listen and Dial return an error): quic-go's
	// controller is fixed (see QUICCongestionControl), and accepting a name
	// that is not in force would mislabel the run. Leave it empty for them;
	// for a like-for-like comparison pin the tcp arm to "reno". (DialFallback
	// and ListenFallback, which carry both kinds, apply it to TCP only.)
	CongestionControl string

	// NotSentLowat, when positive, sets TCP_NOTSENT_LOWAT (bytes) on every
	// socket of the tcp arm. Zero leaves the host default.
	NotSentLowat int

	// AllowGSO lets quic-go use UDP segmentation offload. The zero value
	// (false) wraps the UDP socket so that every send carries exactly one
	// datagram, and a session whose connection still reports GSO fails.
	// Set it only for a deliberate positive control.
	AllowGSO bool

	// Priority, when true, raises the send priority of channel
	// PriorityChannel's QUIC stream above the others (urgency 0,
	// non-incremental; the others keep quic-go's default urgency 3). It applies to the end it is given to, so set it on both
	// ends to prioritise both directions. Ignored by the tcp arm and, since
	// each connection has one stream, meaningless for quic-per-channel
	// (recorded but refused there to avoid a misleading label).
	Priority bool
	// PriorityChannel is the index of the channel whose stream is
	// prioritised when Priority is set.
	PriorityChannel int

	// Certificate is the TLS material for the QUIC arms. The server needs
	// CertPEM and KeyPEM; the client needs only CertPEM, which it trusts as
	// its sole root. Make one with NewCertificate and pass it to the client
	// process out of band (a file, an argument).
	Certificate Certificate

	// QlogDir, when set, makes each QUIC connection write a qlog file
	// (JSON-SEQ, readable by qvis) into this existing directory.
	QlogDir string

	// TCPInfoInterval, when positive, samples TCP_INFO on every tcp-arm
	// connection when the session starts (before any data) and then at
	// this period; State returns the series. Zero takes TCP_INFO only
	// when State is called.
	TCPInfoInterval time.Duration

	// MetricsInterval is the minimum spacing of the QUIC congestion window /
	// bytes-in-flight samples kept from qlog. Zero means 10 ms; loss events
	// are always all kept (up to MaxSamples).
	MetricsInterval time.Duration

	// MaxSamples bounds every recorded series per connection (TCP_INFO
	// samples, QUIC metric samples, loss events). Zero means 100000.
	// Samples beyond the bound are counted as dropped, not kept.
	MaxSamples int

	// HandshakeTimeout bounds connection setup: the TCP connect, the QUIC
	// handshake, and on the server the wait for a session's channel headers.
	// Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout is the QUIC idle timeout. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// KeepAlive is the QUIC keep-alive period. Zero means DefaultKeepAlive;
	// negative disables keep-alives.
	KeepAlive time.Duration
	// PacketSize is the QUIC arms' UDP payload size per full packet
	// (quic.Config.InitialPacketSize, path MTU discovery off), from
	// MinPacketSize to MaxPacketSize; zero means DatagramSize, the bench's.
	// Another size changes what a link's queue limit and loss count
	// against, so it is for experiments that mean it, and for virtual
	// time: quic-go v0.65's pacer keeps 1280 bytes as its datagram size
	// whatever this is, so with a larger one the connection's send loop
	// goes round without waiting while its pacing budget lies between the
	// two; in real time that is a short spin, but in a testing/synctest
	// bubble, where time stands still while a goroutine runs, it never
	// ends. So inside a bubble Listen and Dial refuse a QUIC arm whose size
	// (this, or DatagramSize when it is zero) is over MaxVirtualPacketSize.
	PacketSize int `json:"packet_size,omitempty"`

	// CarrierSecret, when set, is the secret a carrier's client proves it
	// holds in every channel's header (see DialCarrier), and without which
	// a carrier listener refuses a channel. Without it a carrier listener
	// hands over a channel to anyone who reaches its address and writes a
	// header. At least MinCarrierSecretLen bytes; sessions ignore it.
	CarrierSecret []byte `json:"carrier_secret,omitempty"`
	// CarrierLimit bounds what a carrier listener holds at once: channels,
	// QUIC connections, and connections or streams still waiting for their
	// header, each counted apart. CarrierPeerLimit bounds the same from
	// one peer (an IPv4 address or an IPv6 /64). Zero means
	// DefaultCarrierLimit and DefaultCarrierPeerLimit.
	CarrierLimit     int `json:"carrier_limit,omitempty"`
	CarrierPeerLimit int `json:"carrier_peer_limit,omitempty"`

	// Listen, ListenPacket and DialContext, when set, make the session's
	// sockets instead of the net package: the TCP listener, every UDP
	// socket and every outgoing TCP connection. shapedlink's Namespace
	// methods have these signatures:
	//
	//	o.Listen, o.ListenPacket, o.DialContext = link.Client().Listen, link.Client().ListenPacket, link.Client().DialContext
	//
	// Left nil, sockets are made in the calling thread's network namespace.
	// DialContext must return a *net.TCPConn, whose congestion control is
	// then set once it is connected. A *net.UDPConn from ListenPacket gets
	// the GSO-off wrapper; any other net.PacketConn is used one datagram
	// per call, without GSO or ECN (UDPSocketState.PacketConn). JSON leaves
	// them out.
	Listen       func(ctx context.Context, network, address string) (net.Listener, error)   `json:"-"`
	ListenPacket func(ctx context.Context, network, address string) (net.PacketConn, error) `json:"-"`
	DialContext  func(ctx context.Context, network, address string) (net.Conn, error)       `json:"-"`

	// wrapUDP, if set, wraps every UDP socket before anything else sees it.
	// Tests use it to put a spy between quic-go and the kernel.
	wrapUDP func(udpSocket) udpSocket
	// quicAccepted, if set, is called on the server each time quic-go
	// hands the listener a connection (before any stream is accepted).
	// Tests use it to know that a connection has got past quic-go, which
	// silently discards one whose peer closes before that point.
	quicAccepted func()
}

// priorityUrgency is the urgency of the prioritised stream (RFC 9218: 0 is the most
// urgent, quic-go's default is 3).
const priorityUrgency = 0

func (o Options) validate(arm Arm) (Options, error) {
	switch arm {
	case ArmTCP, ArmQUIC, ArmQUICPerChannel:
	default:
		return o, fmt.Errorf("transport: unknown arm %q: want one of %s", arm, armList())
	}
	if o.Channels < 1 || o.Channels > MaxChannels {
		return o, fmt.Errorf("transport: Options.Channels is %d: set it to the number of channels in a session, 1..%d", o.Channels, MaxChannels)
	}
	if o.NotSentLowat < 0 {
		return o, fmt.Errorf("transport: Options.NotSentLowat is %d: use a positive byte count, or 0 for the host default", o.NotSentLowat)
	}
	if o.Priority {
		if o.PriorityChannel < 0 || o.PriorityChannel >= o.Channels {
			return o, fmt.Errorf("transport: Options.PriorityChannel is %d but there are %d channels: use 0..%d", o.PriorityChannel, o.Channels, o.Channels-1)
		}
		if arm != ArmQUIC {
			return o, fmt.Errorf("transport: Options.Priority applies only to the %q arm (stream priority within one connection); "+
				"the %q arm has nothing to prioritise against", ArmQUIC, arm)
		}
	}
	if o.TCPInfoInterval < 0 || o.MetricsInterval < 0 || o.HandshakeTimeout < 0 || o.IdleTimeout < 0 {
		return o, errors.New("transport: negative durations in Options are invalid " +
			"(TCPInfoInterval, MetricsInterval, HandshakeTimeout, IdleTimeout); use 0 for the default")
	}
	if o.PacketSize != 0 && (o.PacketSize < MinPacketSize || o.PacketSize > MaxPacketSize) {
		return o, fmt.Errorf("transport: Options.PacketSize is %d: use %d to %d bytes (quic-go's bounds for a QUIC packet in a 1500-byte MTU), or 0 for %d",
			o.PacketSize, MinPacketSize, MaxPacketSize, DatagramSize)
	}
	if arm.IsQUIC() && o.packetSize() > MaxVirtualPacketSize && inBubble() {
		size := fmt.Sprintf("Options.PacketSize is %d", o.PacketSize)
		if o.PacketSize == 0 {
			size = fmt.Sprintf("Options.PacketSize is 0, so %d (DatagramSize)", DatagramSize)
		}
		return o, fmt.Errorf("transport: %s, but this runs in a testing/synctest bubble, where quic-go v0.65 with packets over %d bytes "+
			"hangs: its pacer counts %d-byte packets whatever the size, so while its budget lies between the two its send loop neither "+
			"sends nor waits, and in a bubble time stands still while it spins: set Options.PacketSize to %d",
			size, MaxVirtualPacketSize, MaxVirtualPacketSize, MaxVirtualPacketSize)
	}
	if o.MaxSamples < 0 {
		return o, fmt.Errorf("transport: Options.MaxSamples is %d: use a positive bound or 0 for the default", o.MaxSamples)
	}
	if o.CongestionControl != "" && arm.IsQUIC() {
		return o, fmt.Errorf("transport: Options.CongestionControl is %q, a TCP setting, but the QUIC arms run quic-go's fixed controller (%s) "+
			"and cannot take it: leave Options.CongestionControl empty for %s, and set it only for the %s arm "+
			"(pin \"reno\" there to compare like with like)",
			o.CongestionControl, QUICCongestionControl, quicArmList(), ArmTCP)
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.KeepAlive < 0 {
		o.KeepAlive = 0
	}
	if o.MetricsInterval == 0 {
		o.MetricsInterval = 10 * time.Millisecond
	}
	if o.MaxSamples == 0 {
		o.MaxSamples = 100000
	}
	return o, nil
}

// inBubble reports whether the calling goroutine is in a testing/synctest
// bubble, whose clock gives times without a monotonic reading.
func inBubble() bool {
	now := time.Now()
	return now == now.Round(0)
}

// packetSize is the QUIC packet size in force: Options.PacketSize, or
// DatagramSize.
func (o Options) packetSize() int {
	if o.PacketSize != 0 {
		return o.PacketSize
	}
	return DatagramSize
}
