package transport

import (
	"fmt"
	"time"
)

// State is what was in force for one end of a session, read from the sockets
// and the QUIC connections. It is meant to be written out as JSON beside a
// run's results. Durations are nanoseconds in JSON.
type State struct {
	Arm      Arm    `json:"arm"`
	Role     string `json:"role"`
	Channels int    `json:"channels"`
	// Started is when the session began (client: the first dial; server:
	// when its first channel arrived).
	Started time.Time `json:"started"`
	// ConnectTime is, on the client, the time from the first dial until
	// every channel was usable (connected or handshaken, and its header
	// written). Zero on the server.
	ConnectTime time.Duration `json:"connect_time_ns"`
	// CongestionControl names the controller in force: for tcp the
	// algorithm read back from every socket (or "mixed: ..." if they
	// differ), for the QUIC arms QUICCongestionControl.
	CongestionControl string `json:"congestion_control"`
	// RequestedCongestionControl is Options.CongestionControl ("" = host
	// default) and HostCongestionControl the host default at setup.
	RequestedCongestionControl string `json:"requested_congestion_control"`
	HostCongestionControl      string `json:"host_congestion_control,omitempty"`
	// Priority describes the stream priority applied, if any.
	Priority *PriorityState  `json:"priority,omitempty"`
	TCP      []TCPConnState  `json:"tcp,omitempty"`
	QUIC     []QUICConnState `json:"quic,omitempty"`
	// UnlistedConnections counts, for a carrier listener, the connections
	// that ended and are no longer in TCP or QUIC: those list the live
	// connections and the last 64 that ended, as they were
	// when they ended.
	UnlistedConnections int `json:"unlisted_connections,omitempty"`
}

// PriorityState records a SetPriority applied to one channel's stream.
type PriorityState struct {
	Channel     int  `json:"channel"`
	Urgency     int  `json:"urgency"`
	Incremental bool `json:"incremental"`
	// OthersUrgency is the urgency every other stream keeps.
	OthersUrgency int `json:"others_urgency"`
}

// TCPConnState is one tcp-arm connection.
type TCPConnState struct {
	Channel    int    `json:"channel"`
	LocalAddr  string `json:"local_addr"`
	RemoteAddr string `json:"remote_addr"`
	// Options are the socket options read back right after setup.
	Options TCPSocketOptions `json:"options"`
	// Info is TCP_INFO taken when State was called.
	Info TCPInfo `json:"info"`
	// InfoError is set if Info could not be read (e.g. socket closed).
	InfoError string `json:"info_error,omitempty"`
	// Series holds the periodic samples when Options.TCPInfoInterval > 0.
	Series        []TCPInfo `json:"series,omitempty"`
	SeriesDropped int       `json:"series_dropped,omitempty"`
}

// QUICStats is quic-go's ConnectionStats for one connection.
type QUICStats struct {
	MinRTT           time.Duration `json:"min_rtt_ns"`
	LatestRTT        time.Duration `json:"latest_rtt_ns"`
	SmoothedRTT      time.Duration `json:"srtt_ns"`
	MeanDeviation    time.Duration `json:"rttvar_ns"`
	CongestionWindow uint64        `json:"cwnd_bytes"`
	BytesSent        uint64        `json:"bytes_sent"`
	PacketsSent      uint64        `json:"packets_sent"`
	BytesReceived    uint64        `json:"bytes_received"`
	PacketsReceived  uint64        `json:"packets_received"`
	BytesLost        uint64        `json:"bytes_lost"`
	PacketsLost      uint64        `json:"packets_lost"`
}

// QUICConnState is one QUIC connection of a QUIC arm.
type QUICConnState struct {
	// Channels lists the channels this connection carries (a carrier
	// listener's connection, the first MaxChannels).
	Channels          []int  `json:"channels"`
	LocalAddr         string `json:"local_addr"`
	RemoteAddr        string `json:"remote_addr"`
	CongestionControl string `json:"congestion_control"`
	// GSO is quic-go's ConnectionState().GSO: whether it sends with UDP
	// segmentation offload.
	GSO         bool   `json:"gso"`
	QUICVersion string `json:"quic_version"`
	TLSVersion  string `json:"tls_version"`
	ALPN        string `json:"alpn"`
	// ECNState is quic-go's ECN validation state for its sending path
	// (testing, unknown, failed, capable), from qlog; empty if never
	// logged. "capable" shows ECN marks made the round trip, which needs
	// ECN reception on the peer's socket.
	ECNState string `json:"ecn_state,omitempty"`
	// Socket is the UDP socket as read back from the kernel.
	Socket UDPSocketState `json:"socket"`
	// UnroutableDrops counts the packets a client connection's sockets
	// dropped, once it was up, because the host had no route for them
	// (ENETUNREACH, EHOSTUNREACH, ENETDOWN; a moment of this is usual
	// while a client's address changes). They are lost packets to quic-go,
	// which would otherwise end the connection on the send error.
	UnroutableDrops int64 `json:"unroutable_drops,omitempty"`
	// ConfiguredPacketSize is quic.Config.InitialPacketSize with path MTU
	// discovery off; MaxShortHeaderPacket is the largest 1-RTT packet the
	// connection actually sent (from qlog), ShortHeaderPackets how many
	// were sent and OversizePackets how many exceeded the configured size.
	ConfiguredPacketSize int   `json:"configured_packet_size"`
	PathMTUDiscovery     bool  `json:"path_mtu_discovery"`
	MaxShortHeaderPacket int   `json:"max_short_header_packet"`
	ShortHeaderPackets   int64 `json:"short_header_packets"`
	OversizePackets      int64 `json:"oversize_packets"`
	// LocalParameters and PeerParameters are the transport parameters
	// each side announced (initial flow-control windows among them).
	LocalParameters *TransportParameters `json:"local_parameters,omitempty"`
	PeerParameters  *TransportParameters `json:"peer_parameters,omitempty"`
	// MaxConnectionReceiveWindow and MaxStreamReceiveWindow are the
	// auto-tuning ceilings given to quic-go (configuration: quic-go does
	// not report them).
	MaxConnectionReceiveWindow uint64    `json:"max_connection_receive_window"`
	MaxStreamReceiveWindow     uint64    `json:"max_stream_receive_window"`
	Stats                      QUICStats `json:"stats"`
	// Metrics is the congestion window and bytes in flight over time,
	// at most one sample per Options.MetricsInterval.
	Metrics          []QUICMetric          `json:"metrics,omitempty"`
	MetricsDropped   int                   `json:"metrics_dropped,omitempty"`
	Losses           []QUICLoss            `json:"losses,omitempty"`
	LossesDropped    int                   `json:"losses_dropped,omitempty"`
	CongestionStates []QUICCongestionState `json:"congestion_states,omitempty"`
	QlogFile         string                `json:"qlog_file,omitempty"`
	QlogError        string                `json:"qlog_error,omitempty"`
}

// State reads what is in force now: socket options and TCP_INFO for tcp,
// ConnectionState, ConnectionStats and the qlog-derived series for QUIC.
// Call it before Close for live figures; after Close it still returns the
// QUIC series and stats, but TCP_INFO can no longer be read.
func (s *Session) State() State {
	st := State{
		Arm:                        s.Arm(),
		Role:                       s.role,
		Channels:                   len(s.channels),
		Started:                    s.started,
		ConnectTime:                s.connectTime,
		RequestedCongestionControl: s.opts.CongestionControl,
		HostCongestionControl:      s.hostCC,
		Priority:                   s.priority,
	}
	if s.arm == ArmTCP {
		seen := map[string]bool{}
		var algs []string
		for _, c := range s.tcp {
			cs := c.state(time.Since(s.started))
			st.TCP = append(st.TCP, cs)
			if !seen[cs.Options.CongestionControl] {
				seen[cs.Options.CongestionControl] = true
				algs = append(algs, cs.Options.CongestionControl)
			}
		}
		switch len(algs) {
		case 1:
			st.CongestionControl = algs[0]
		default:
			st.CongestionControl = fmt.Sprintf("mixed: %v", algs)
		}
		return st
	}
	st.CongestionControl = QUICCongestionControl
	for _, c := range s.quic {
		st.QUIC = append(st.QUIC, c.state())
	}
	return st
}
