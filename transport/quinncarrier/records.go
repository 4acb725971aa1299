package quinncarrier

import "time"

// Ready is what an end printed when it was ready.
type Ready struct {
	Role string `json:"role"`
	// PID is the end's own process id, as its PID namespace sees it.
	PID int `json:"pid"`
	// QUIC is the end's UDP address.
	QUIC string `json:"quic"`
	// Server is the address the client end connected to.
	Server string `json:"server,omitempty"`
	// Channels are the client end's TCP addresses, one per channel.
	Channels []string `json:"channels,omitempty"`
	// Connection is the client end's connection, just after the handshake.
	Connection *ConnStats `json:"connection,omitempty"`
	Settings   Settings   `json:"settings"`
}

// Settings are an end's settings as it printed them back: Controller and
// InitialWindow read from a controller quinn made, the rest as set.
type Settings struct {
	CC                 string `json:"cc"`
	Controller         string `json:"controller"`
	InitialWindow      uint64 `json:"initial_window"`
	ControllerDatagram int    `json:"controller_datagram"`
	Datagram           int    `json:"datagram"`
	PMTUD              bool   `json:"pmtud"`
	ConnectionWindow   uint64 `json:"connection_window"`
	StreamWindow       uint64 `json:"stream_window"`
	SendWindow         uint64 `json:"send_window"`
	Priorities         []int  `json:"priorities"`
	Segmentation       string `json:"segmentation"`
	TLS                string `json:"tls"`
	ALPN               string `json:"alpn"`
	IdleTimeoutMS      int64  `json:"idle_timeout_ms"`
	KeepAliveMS        int64  `json:"keep_alive_ms"`
	Quinn              string `json:"quinn"`
	QuinnProto         string `json:"quinn_proto"`
	QuinnUDP           string `json:"quinn_udp"`
	Rustls             string `json:"rustls"`
	Tokio              string `json:"tokio"`
}

// ConnStats is one quinn connection's statistics (quinn's
// Connection::stats and its congestion controller).
type ConnStats struct {
	Remote           string   `json:"remote"`
	Controller       string   `json:"controller"`
	InitialWindow    uint64   `json:"initial_window"`
	Cwnd             uint64   `json:"cwnd"`
	RTTMicros        uint64   `json:"rtt_us"`
	CongestionEvents uint64   `json:"congestion_events"`
	LostPackets      uint64   `json:"lost_packets"`
	LostBytes        uint64   `json:"lost_bytes"`
	SentPackets      uint64   `json:"sent_packets"`
	UDPTx            UDPStats `json:"udp_tx"`
	UDPRx            UDPStats `json:"udp_rx"`
	Closed           string   `json:"closed,omitempty"`
}

// UDPStats counts one direction's UDP datagrams as quinn saw them.
type UDPStats struct {
	Datagrams uint64 `json:"datagrams"`
	Bytes     uint64 `json:"bytes"`
	Transmits uint64 `json:"transmits"`
}

// SocketStats is what an end's socket sent. With Segmentation "off",
// Batches counts quinn's offload batches taken apart, and MaxDatagram is
// the largest datagram written.
type SocketStats struct {
	Segmentation     string `json:"segmentation"`
	Transmits        uint64 `json:"transmits"`
	Batches          uint64 `json:"batches"`
	Datagrams        uint64 `json:"datagrams"`
	MaxDatagram      uint64 `json:"max_datagram"`
	QuinnGSOSegments uint64 `json:"quinn_gso_segments"`
}

// ChannelStats is what one channel carried at one end: bytes read from
// its TCP connections (onto the stream) and written to them.
type ChannelStats struct {
	Channel      int    `json:"ch"`
	Streams      uint64 `json:"streams"`
	BytesFromTCP uint64 `json:"bytes_from_tcp"`
	BytesToTCP   uint64 `json:"bytes_to_tcp"`
}

// EndStats is an end's stats file, written when it stopped.
type EndStats struct {
	Role        string         `json:"role"`
	Ended       string         `json:"ended"`
	Settings    Settings       `json:"settings"`
	Socket      SocketStats    `json:"socket"`
	Connections []ConnStats    `json:"connections"`
	Channels    []ChannelStats `json:"channels"`
}

// readyTimeout bounds how long Start waits for each end to say it is ready.
const readyTimeout = 20 * time.Second

// stopTimeout is how long Stop waits for an end to exit after SIGTERM
// before it kills it.
const stopTimeout = 5 * time.Second
