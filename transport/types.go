package transport

import (
	"net"
	"time"

	"github.com/quic-go/quic-go"
)

// udpSocket is what transport needs from a UDP socket: *net.UDPConn, or a
// test spy wrapping one.
type udpSocket interface {
	quic.OOBCapablePacketConn
	net.Conn
	SetWriteBuffer(int) error
}

// UDPSocketState is what a QUIC connection's UDP socket had in force, read
// back from the kernel (not from configuration).
type UDPSocketState struct {
	// GSOWrapper says whether the socket was behind the GSO-off wrapper.
	GSOWrapper bool `json:"gso_wrapper"`
	// KernelGSO says whether the kernel accepts UDP_SEGMENT on this socket,
	// i.e. whether quic-go would have used GSO without the wrapper.
	KernelGSO bool `json:"kernel_gso"`
	// UDPSegment is the socket-wide UDP_SEGMENT size (0: none).
	UDPSegment int `json:"udp_segment"`
	// ReceiveBuffer and SendBuffer are SO_RCVBUF and SO_SNDBUF as the
	// kernel reports them (twice the requested size, by Linux convention).
	ReceiveBuffer int `json:"so_rcvbuf"`
	SendBuffer    int `json:"so_sndbuf"`
	// ECNReceive says whether IP_RECVTOS (or IPV6_RECVTCLASS) is on, so
	// received ECN marks reach quic-go.
	ECNReceive bool `json:"ecn_receive"`
	// MTUDiscover is IP_MTU_DISCOVER (3 = IP_PMTUDISC_PROBE: DF set, no
	// kernel PMTU state), or -1 if unreadable.
	MTUDiscover int `json:"ip_mtu_discover"`
	// PacketConn is the Go type of the net.PacketConn quic-go was given
	// when it is not a UDP socket (an in-process link's end, say), and
	// empty for a UDP socket. quic-go then reads and writes it one
	// datagram per call, with no GSO (a plain PacketConn cannot do it,
	// so there is no wrapper) and no ECN; the fields above describe no
	// kernel socket and stay zero, MTUDiscover -1.
	PacketConn string `json:"packet_conn,omitempty"`
}

// TCPSocketOptions are a TCP socket's options as read back from the kernel.
type TCPSocketOptions struct {
	CongestionControl string `json:"congestion_control"`
	NoDelay           bool   `json:"nodelay"`
	// NotSentLowat is TCP_NOTSENT_LOWAT; 4294967295 (or 0) means unset.
	NotSentLowat uint32 `json:"notsent_lowat"`
}

// TCPInfo is one TCP_INFO snapshot of a connection, the in-process
// equivalent of a line of `ss -tim`. At is the offset from the session
// start. Rates are bytes per second; times are durations.
type TCPInfo struct {
	At           time.Duration `json:"t_ns"`
	Algorithm    string        `json:"algorithm"`
	State        uint8         `json:"state"`
	CAState      uint8         `json:"ca_state"`
	CwndSegments uint32        `json:"cwnd_segments"`
	SsthreshSegs uint32        `json:"ssthresh_segments"`
	MSS          uint32        `json:"mss"`
	SRTT         time.Duration `json:"srtt_ns"`
	RTTVar       time.Duration `json:"rttvar_ns"`
	MinRTT       time.Duration `json:"min_rtt_ns"`
	// Retransmits is tcpi_total_retrans: segments retransmitted over the
	// connection's life.
	Retransmits uint32 `json:"total_retrans"`
	// Lost is tcpi_lost: segments currently presumed lost.
	Lost          uint32 `json:"lost"`
	Unacked       uint32 `json:"unacked"`
	DeliveryRate  uint64 `json:"delivery_rate_Bps"`
	PacingRate    uint64 `json:"pacing_rate_Bps"`
	BytesAcked    uint64 `json:"bytes_acked"`
	BytesSent     uint64 `json:"bytes_sent"`
	BytesRetrans  uint64 `json:"bytes_retrans"`
	BytesReceived uint64 `json:"bytes_received"`
	NotSentBytes  uint32 `json:"notsent_bytes"`
	SegsOut       uint32 `json:"segs_out"`
	SegsIn        uint32 `json:"segs_in"`
	// SndWnd is the peer's advertised receive window, RcvWnd the one this
	// end advertises and RcvSpace its receive-buffer autotuning estimate.
	SndWnd   uint32 `json:"snd_wnd"`
	RcvWnd   uint32 `json:"rcv_wnd"`
	RcvSpace uint32 `json:"rcv_space"`
}
