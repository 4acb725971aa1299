package calibrate

// GSOLoss is the Config.GSOLoss measurement: datagrams sent with UDP_SEGMENT
// from the server's namespace across a lossy link, counted one by one at
// the receiver, against the configured loss. It says whether a link
// loses a super-packet's datagrams one by one at the configured share
// (the emulator judges every wire segment) rather than whole.
type GSOLoss struct {
	Profile string   `json:"profile"`
	Backend string   `json:"backend"`
	Offload string   `json:"offload"`
	Applied []string `json:"applied,omitempty"`
	// The sender: PacePct of the rate (counting each datagram's frame on
	// the wire), for Seconds, Batch datagrams of Payload bytes per write
	// with UDP_SEGMENT (gso_size Payload).
	LossWantPct float64 `json:"loss_configured_pct"`
	PacePct     float64 `json:"pace_pct_of_rate"`
	Seconds     float64 `json:"seconds"`
	Payload     int     `json:"payload_bytes"`
	Batch       int     `json:"datagrams_per_write"`
	// The receiver: GRO says whether its socket took UDP_GRO (its reads
	// then hold many datagrams, split by the segment size the kernel
	// reports); Coalesced counts the reads that held more than one;
	// Malformed the datagrams of the wrong length or with a number never
	// sent.
	GRO       bool `json:"receiver_udp_gro"`
	Coalesced int  `json:"coalesced_reads"`
	Malformed int  `json:"malformed"`
	// Sent datagrams, Lost of them never seen; LossPct the share with
	// its 95% Wilson interval, widened by Inflation (the loss model's
	// variance over the binomial one: 1 for independent loss, more for
	// Gilbert-Elliott's or the 4-state model's bursts), Inside whether the
	// configured mean loss (LossWantPct) lies in it. MeanBurst is the mean
	// length of runs of lost datagrams, BurstWant the model's (1/(1-p) for
	// independent loss, 100/r for Gilbert-Elliott, for the 4-state model
	// the mean of its isolated losses and its stays in state 3).
	Sent      int     `json:"sent"`
	Lost      int     `json:"lost"`
	LossPct   float64 `json:"loss_measured_pct"`
	LossLoPct float64 `json:"loss_ci95_lo_pct"`
	LossHiPct float64 `json:"loss_ci95_hi_pct"`
	Inflation float64 `json:"loss_variance_inflation"`
	Inside    bool    `json:"loss_configured_inside_ci"`
	MeanBurst float64 `json:"loss_mean_burst"`
	BurstWant float64 `json:"loss_burst_configured"`
	// The emulator's account of the server-to-client direction (Shaper
	// false with another backend): wire packets it received and lost to
	// the configured loss, and the drops that would bias the figure: the
	// limit, failed writes, frames the kernel dropped before it read them
	// and frames it could not take (oversize or unreadable).
	Shaper          bool   `json:"shaper_counted"`
	ShaperReceived  uint64 `json:"shaper_received"`
	ShaperLossDrops uint64 `json:"shaper_loss_drops"`
	LimitDrops      uint64 `json:"limit_drops"`
	SendErrors      uint64 `json:"send_errors"`
	SocketDrops     uint64 `json:"socket_drops"`
	OtherDrops      uint64 `json:"oversize_or_unreadable_drops"`
	SuperPacketsIn  uint64 `json:"super_packets_in"`
	SuperPacketsOut uint64 `json:"super_packets_out"`
	// RcvbufErrors and SndbufErrors are the receiving and sending
	// namespaces' UDP counters over the run: datagrams their sockets
	// dropped.
	RcvbufErrors uint64 `json:"receiver_rcvbuf_errors"`
	SndbufErrors uint64 `json:"sender_sndbuf_errors"`
	// Unjudged says why the loss is not judged against the configured
	// one (drops other than the configured loss), "" when it is.
	Unjudged string `json:"unjudged,omitempty"`
	Error    string `json:"error,omitempty"`
}

// QUICGSO is the Config.QUICGSO measurement: one quic-go bulk transfer, server
// to client, with quic-go's default GSO, across a link: its goodput over
// the last two thirds of Config.Bulk, whether quic-go reports GSO in use, and
// the emulator's per-datagram loss in the server-to-client direction
// against the configured loss.
type QUICGSO struct {
	Profile     string   `json:"profile"`
	Backend     string   `json:"backend"`
	Offload     string   `json:"offload"`
	Applied     []string `json:"applied,omitempty"`
	RateMbit    float64  `json:"rate_mbit"`
	LossWantPct float64  `json:"loss_configured_pct"`
	Seconds     float64  `json:"window_seconds"`
	GoodputMbit float64  `json:"goodput_mbit"`
	GoodputPct  float64  `json:"goodput_pct_of_rate"`
	// GSO is quic-go's ConnectionState().GSO on the sending (server) side.
	GSO bool `json:"quic_go_gso"`
	// The emulator's account of the server-to-client direction over the
	// whole transfer (Shaper false with another backend): the share of
	// the wire packets it received that the configured loss took, with
	// its 95% Wilson interval widened by Inflation (as GSOLoss's), against
	// the configured mean loss; limit drops are the flow filling the
	// queue, which a congestion-controlled flow does.
	Shaper          bool    `json:"shaper_counted"`
	ShaperReceived  uint64  `json:"shaper_received"`
	ShaperLossDrops uint64  `json:"shaper_loss_drops"`
	LossPct         float64 `json:"loss_measured_pct"`
	LossLoPct       float64 `json:"loss_ci95_lo_pct"`
	LossHiPct       float64 `json:"loss_ci95_hi_pct"`
	Inflation       float64 `json:"loss_variance_inflation"`
	Inside          bool    `json:"loss_configured_inside_ci"`
	LimitDrops      uint64  `json:"limit_drops"`
	SocketDrops     uint64  `json:"socket_drops"`
	SendErrors      uint64  `json:"send_errors"`
	SuperPacketsIn  uint64  `json:"super_packets_in"`
	SuperPacketsOut uint64  `json:"super_packets_out"`
	Error           string  `json:"error,omitempty"`
}
