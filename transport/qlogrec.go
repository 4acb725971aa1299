package transport

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// QUICMetric is one sample of quic-go's recovery state, taken from its qlog
// recovery:metrics_updated events. At is the offset from the session start.
type QUICMetric struct {
	At               time.Duration `json:"t_ns"`
	CongestionWindow int           `json:"cwnd_bytes"`
	BytesInFlight    int           `json:"bytes_in_flight"`
	PacketsInFlight  int           `json:"packets_in_flight"`
	SmoothedRTT      time.Duration `json:"srtt_ns"`
	LatestRTT        time.Duration `json:"latest_rtt_ns"`
}

// QUICLoss is one packet quic-go declared lost (qlog recovery:packet_lost).
type QUICLoss struct {
	At           time.Duration `json:"t_ns"`
	PacketNumber int64         `json:"packet_number"`
	PacketType   string        `json:"packet_type"`
	Trigger      string        `json:"trigger"`
}

// QUICCongestionState is one change of quic-go's congestion controller
// state (slow_start, congestion_avoidance, recovery, application_limited).
type QUICCongestionState struct {
	At    time.Duration `json:"t_ns"`
	State string        `json:"state"`
}

// TransportParameters are the QUIC transport parameters one side announced,
// as quic-go logged them.
type TransportParameters struct {
	MaxUDPPayloadSize              int64         `json:"max_udp_payload_size"`
	InitialMaxData                 int64         `json:"initial_max_data"`
	InitialMaxStreamDataBidiLocal  int64         `json:"initial_max_stream_data_bidi_local"`
	InitialMaxStreamDataBidiRemote int64         `json:"initial_max_stream_data_bidi_remote"`
	InitialMaxStreamsBidi          int64         `json:"initial_max_streams_bidi"`
	MaxIdleTimeout                 time.Duration `json:"max_idle_timeout_ns"`
	MaxAckDelay                    time.Duration `json:"max_ack_delay_ns"`
}

// recorder is a qlogwriter.Trace that keeps the events transport reports in
// memory and, when a qlog directory is set, also writes the full qlog file.
// quic-go creates one per connection through Config.Tracer; the server's
// arrives there through the context set by Transport.ConnContext.
type recorder struct {
	base       time.Time
	interval   time.Duration
	maxSamples int
	qlogDir    string
	label      string // arm and role, for file names

	mu              sync.Mutex
	file            *qlogwriter.FileSeq
	filePath        string
	fileErr         error
	metrics         []QUICMetric
	lastAppend      time.Duration
	metricsDropped  int
	losses          []QUICLoss
	lossesDropped   int
	states          []QUICCongestionState
	maxShortPacket  int
	packetSize      int // the configured QUIC packet size
	shortPackets    int64
	oversizePackets int64
	local, peer     *TransportParameters
	ecn             string
}

type recorderKey struct{}

func newRecorder(base time.Time, o Options, label string) *recorder {
	return &recorder{base: base, interval: o.MetricsInterval, maxSamples: o.MaxSamples, qlogDir: o.QlogDir, label: label,
		packetSize: o.packetSize()}
}

// tracer is the Config.Tracer for every connection: it hands quic-go the
// recorder placed in the connection's context.
func tracer(ctx context.Context, isClient bool, connID quic.ConnectionID) qlogwriter.Trace {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok {
		return nil
	}
	r.openFile(isClient, connID)
	return r
}

func (r *recorder) openFile(isClient bool, connID quic.ConnectionID) {
	if r.qlogDir == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file != nil || r.fileErr != nil {
		return
	}
	path := filepath.Join(r.qlogDir, fmt.Sprintf("%s_%s.sqlog", r.label, connID))
	f, err := os.Create(path)
	if err != nil {
		r.fileErr = fmt.Errorf("creating qlog file: %w", err)
		return
	}
	r.filePath = path
	r.file = qlogwriter.NewConnectionFileSeq(&bufferedFile{w: bufio.NewWriter(f), f: f}, isClient, connID)
	go r.file.Run()
}

type bufferedFile struct {
	w *bufio.Writer
	f *os.File
}

func (b *bufferedFile) Write(p []byte) (int, error) { return b.w.Write(p) }
func (b *bufferedFile) Close() error {
	err := b.w.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// AddProducer implements qlogwriter.Trace.
func (r *recorder) AddProducer() qlogwriter.Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &producer{r: r}
	if r.file != nil {
		p.file = r.file.AddProducer()
	}
	return p
}

type producer struct {
	r    *recorder
	file qlogwriter.Recorder
}

func (p *producer) RecordEvent(ev qlogwriter.Event) {
	p.r.record(ev)
	if p.file != nil {
		p.file.RecordEvent(ev)
	}
}

func (p *producer) Close() error {
	if p.file != nil {
		return p.file.Close()
	}
	return nil
}

func (r *recorder) record(ev qlogwriter.Event) {
	switch e := ev.(type) {
	case qlog.MetricsUpdated:
		r.metric(e)
	case *qlog.MetricsUpdated:
		r.metric(*e)
	case qlog.PacketLost:
		r.loss(e)
	case *qlog.PacketLost:
		r.loss(*e)
	case qlog.PacketSent:
		r.sent(e)
	case *qlog.PacketSent:
		r.sent(*e)
	case qlog.CongestionStateUpdated:
		r.congestion(e)
	case *qlog.CongestionStateUpdated:
		r.congestion(*e)
	case qlog.ECNStateUpdated:
		r.mu.Lock()
		r.ecn = string(e.State)
		r.mu.Unlock()
	case qlog.ParametersSet:
		r.params(e)
	case *qlog.ParametersSet:
		r.params(*e)
	}
}

// now is the offset from the time base; call it with r.mu held.
func (r *recorder) now() time.Duration { return time.Since(r.base) }

func (r *recorder) metric(e qlog.MetricsUpdated) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.now()
	m := QUICMetric{At: at, CongestionWindow: e.CongestionWindow, BytesInFlight: e.BytesInFlight,
		PacketsInFlight: e.PacketsInFlight, SmoothedRTT: e.SmoothedRTT, LatestRTT: e.LatestRTT}
	// Keep at most one sample per interval: the latest value within it.
	if n := len(r.metrics); n > 0 && at-r.lastAppend < r.interval {
		r.metrics[n-1] = m
		return
	}
	if len(r.metrics) >= r.maxSamples {
		r.metricsDropped++
		return
	}
	r.metrics = append(r.metrics, m)
	r.lastAppend = at
}

func (r *recorder) loss(e qlog.PacketLost) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := QUICLoss{At: r.now(), PacketNumber: int64(e.Header.PacketNumber), PacketType: string(e.Header.PacketType), Trigger: string(e.Trigger)}
	if len(r.losses) >= r.maxSamples {
		r.lossesDropped++
		return
	}
	r.losses = append(r.losses, l)
}

func (r *recorder) sent(e qlog.PacketSent) {
	if e.Header.PacketType != qlog.PacketType1RTT {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shortPackets++
	if e.Raw.Length > r.maxShortPacket {
		r.maxShortPacket = e.Raw.Length
	}
	if e.Raw.Length > r.packetSize {
		r.oversizePackets++
	}
}

func (r *recorder) congestion(e qlog.CongestionStateUpdated) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := QUICCongestionState{At: r.now(), State: string(e.State)}
	if len(r.states) < r.maxSamples {
		r.states = append(r.states, s)
	}
}

func (r *recorder) params(e qlog.ParametersSet) {
	p := &TransportParameters{
		MaxUDPPayloadSize:              int64(e.MaxUDPPayloadSize),
		InitialMaxData:                 int64(e.InitialMaxData),
		InitialMaxStreamDataBidiLocal:  int64(e.InitialMaxStreamDataBidiLocal),
		InitialMaxStreamDataBidiRemote: int64(e.InitialMaxStreamDataBidiRemote),
		InitialMaxStreamsBidi:          e.InitialMaxStreamsBidi,
		MaxIdleTimeout:                 e.MaxIdleTimeout,
		MaxAckDelay:                    e.MaxAckDelay,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Initiator {
	case qlog.InitiatorLocal:
		r.local = p
	case qlog.InitiatorRemote:
		r.peer = p
	}
}

// fill copies what the recorder holds into s.
func (r *recorder) fill(s *QUICConnState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Metrics = append([]QUICMetric(nil), r.metrics...)
	s.MetricsDropped = r.metricsDropped
	s.Losses = append([]QUICLoss(nil), r.losses...)
	s.LossesDropped = r.lossesDropped
	s.CongestionStates = append([]QUICCongestionState(nil), r.states...)
	s.MaxShortHeaderPacket = r.maxShortPacket
	s.ShortHeaderPackets = r.shortPackets
	s.OversizePackets = r.oversizePackets
	s.LocalParameters = r.local
	s.PeerParameters = r.peer
	s.ECNState = r.ecn
	s.QlogFile = r.filePath
	if r.fileErr != nil {
		s.QlogError = r.fileErr.Error()
	}
}

// rebase moves the recorder's time base to t (the session start), shifting
// what was already recorded; samples from before t get negative offsets.
func (r *recorder) rebase(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := t.Sub(r.base)
	r.base = t
	r.lastAppend -= d
	for i := range r.metrics {
		r.metrics[i].At -= d
	}
	for i := range r.losses {
		r.losses[i].At -= d
	}
	for i := range r.states {
		r.states[i].At -= d
	}
}
