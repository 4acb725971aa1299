package quinncarrier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// Controllers are the congestion controllers quinn 0.9 offers, by the
// names Config.Controller takes.
var Controllers = []string{"cubic", "bbr", "newreno"}

// The settings the reference pinned, which every end is started with.
const (
	datagram         = 1400
	connectionWindow = transport.ConnectionReceiveWindow
	streamWindow     = transport.StreamReceiveWindow
)

// Config is one run of the carrier.
type Config struct {
	// Controller is quinn's congestion controller at both ends: one of
	// Controllers.
	Controller string
	// InitialWindow is the controller's initial window in bytes; 0 keeps
	// quinn's default for the controller (the ends report it).
	InitialWindow int
	// Priorities, when set, are each channel's stream priority (higher is
	// sent first), one per target, at both ends.
	Priorities []int
	// Segmentation is "off" (or empty): every datagram leaves as a packet
	// of its own; or "kernel": quinn's own offload batches, for a control
	// that must be seen as offload.
	Segmentation string
	// Dir is where the ends' certificate and stats files go: an existing
	// directory, the run's own. Nothing is written outside it.
	Dir string
	// Binary is the quicbench-quinn program; empty means Binary's.
	Binary string
}

// Ends are where the two ends run and what they connect.
type Ends struct {
	// Server and Client start each end's process: a *shapedlink.Namespace
	// for a link's end, or nil for this host.
	Server, Client Starter
	// Listen is the server end's UDP address, "ip:port" (port 0 picks
	// one); the client end dials the address the server end reports.
	Listen string
	// Targets are, per channel, the TCP address the server end connects
	// each of the channel's streams to.
	Targets []string
	// ClientListen is the IP address the client end takes a TCP port on
	// per channel ("" means 127.0.0.1).
	ClientListen string
}

// Starter starts a command, as shapedlink.Namespace.Start does inside a
// network namespace.
type Starter interface {
	Start(cmd *exec.Cmd) error
}

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

// Report is what both ends recorded.
type Report struct {
	Server, Client EndStats
}

// readyTimeout bounds how long Start waits for each end to say it is ready.
const readyTimeout = 20 * time.Second

// stopTimeout is how long Stop waits for an end to exit after SIGTERM
// before it kills it.
const stopTimeout = 5 * time.Second

func (c Config) check(e Ends) error {
	errs := c.checkConfig(len(e.Targets))
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for i, t := range e.Targets {
		if t == "" || strings.Contains(t, ",") {
			bad("quinncarrier: target %d %q is not a TCP address", i, t)
		}
	}
	if e.Listen == "" {
		bad("quinncarrier: Ends.Listen is empty: give the server end's UDP address, ip:port")
	}
	return errors.Join(errs...)
}

// checkConfig says what is wrong with c for an end of channels channels.
func (c Config) checkConfig(channels int) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	known := false
	for _, cc := range Controllers {
		known = known || c.Controller == cc
	}
	if !known {
		bad("quinncarrier: controller %q: use one of %s", c.Controller, strings.Join(Controllers, ", "))
	}
	if c.InitialWindow < 0 {
		bad("quinncarrier: InitialWindow %d is negative; 0 keeps quinn's default", c.InitialWindow)
	}
	if c.Segmentation != "" && c.Segmentation != "off" && c.Segmentation != "kernel" {
		bad("quinncarrier: Segmentation %q: use off (or empty) or kernel", c.Segmentation)
	}
	if c.Dir == "" {
		bad("quinncarrier: Dir is empty: give the run's own directory")
	} else if st, err := os.Stat(c.Dir); err != nil || !st.IsDir() {
		bad("quinncarrier: Dir %s is not a directory", c.Dir)
	}
	if channels <= 0 || channels > 1000 {
		bad("quinncarrier: %d channels (targets): give one TCP address per channel, 1 to 1000", channels)
	}
	if c.Priorities != nil && len(c.Priorities) != channels {
		bad("quinncarrier: %d priorities for %d channels: give one per channel, or none", len(c.Priorities), channels)
	}
	return errs
}

// Carrier is a running pair of ends.
type Carrier struct {
	server, client *End
	ready          [2]Ready
}

// Start starts the server end, waits until it is ready, starts the client
// end towards it and waits until it has connected and listens for every
// channel. It fails with a clear error when either end does not get
// there within 20 s, and then leaves neither running. ctx bounds the
// start only; Stop or Kill ends the ends.
func Start(ctx context.Context, c Config, e Ends) (*Carrier, error) {
	if err := c.check(e); err != nil {
		return nil, err
	}
	cert, err := NewCertificate()
	if err != nil {
		return nil, err
	}
	car := &Carrier{}
	if car.server, err = startServer(ctx, c, e.Server, e.Listen, e.Targets, cert); err != nil {
		return nil, err
	}
	if car.client, err = startClient(ctx, c, e.Client, car.server.ready.QUIC, e.ClientListen, len(e.Targets), cert.ClientOnly()); err != nil {
		car.server.kill()
		return nil, err
	}
	car.ready = [2]Ready{car.server.ready, car.client.ready}
	return car, nil
}

// StartServer starts the server end alone, on this host in namespace ns
// (nil: the calling thread's), dying with this process: on UDP address listen, connecting channel i's streams to
// targets[i]. cert must hold its key; the client end gets its public half.
// It returns when the end is ready; End.Stop or End.Kill ends it.
func StartServer(ctx context.Context, c Config, ns *SocketNamespace, listen string, targets []string, cert transport.Certificate) (*End, error) {
	if err := c.check(Ends{Listen: listen, Targets: targets}); err != nil {
		return nil, err
	}
	return startServer(ctx, c, starterOf(ns), listen, targets, cert)
}

// StartClient starts the client end alone, on this host in namespace ns
// (nil: the calling thread's), dying with this process, connected to the server end at server (its UDP address)
// and listening on clientListen ("" is 127.0.0.1) for channels channels.
// It returns when the connection is up and every channel's port listens.
func StartClient(ctx context.Context, c Config, ns *SocketNamespace, server, clientListen string, channels int, cert transport.Certificate) (*End, error) {
	if errs := c.checkConfig(channels); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if server == "" {
		return nil, errors.New("quinncarrier: no server address for the client end: give the server end's UDP address, ip:port")
	}
	return startClient(ctx, c, starterOf(ns), server, clientListen, channels, cert)
}

// starterOf is ns as startEnd's starter: nil for the calling thread's
// namespace.
func starterOf(ns *SocketNamespace) Starter {
	if ns == nil {
		return nil
	}
	return nsStarter{ns}
}

func commonArgs(c Config, certFile string) []string {
	common := []string{"--cc", c.Controller, "--datagram", strconv.Itoa(datagram),
		"--connection-window", strconv.Itoa(connectionWindow), "--stream-window", strconv.Itoa(streamWindow),
		"--initial-window", strconv.Itoa(c.InitialWindow), "--cert", certFile}
	if c.Segmentation != "" {
		common = append(common, "--segmentation", c.Segmentation)
	}
	if c.Priorities != nil {
		p := make([]string, len(c.Priorities))
		for i, v := range c.Priorities {
			p[i] = strconv.Itoa(v)
		}
		common = append(common, "--priorities", strings.Join(p, ","))
	}
	return common
}

func binaryOf(ctx context.Context, c Config) (string, error) {
	if c.Binary != "" {
		return c.Binary, nil
	}
	return Binary(ctx)
}

func startServer(ctx context.Context, c Config, s Starter, listen string, targets []string, cert transport.Certificate) (*End, error) {
	bin, err := binaryOf(ctx, c)
	if err != nil {
		return nil, err
	}
	if cert, err = serverChain(cert); err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(c.Dir, "quinn-cert.pem"), filepath.Join(c.Dir, "quinn-key.pem")
	if err := writePEM(cert, certFile, keyFile); err != nil {
		return nil, err
	}
	stats := filepath.Join(c.Dir, "server-stats.json")
	args := append([]string{"server", "--listen", listen, "--key", keyFile,
		"--targets", strings.Join(targets, ","), "--stats", stats}, commonArgs(c, certFile)...)
	e, err := startEnd(ctx, s, bin, args)
	if err != nil {
		return nil, fmt.Errorf("quinncarrier: the server end: %w", err)
	}
	e.stats = stats
	return e, nil
}

func startClient(ctx context.Context, c Config, s Starter, server, listen string, channels int, cert transport.Certificate) (*End, error) {
	bin, err := binaryOf(ctx, c)
	if err != nil {
		return nil, err
	}
	certFile := filepath.Join(c.Dir, "quinn-cert.pem")
	if err := writePEM(transport.Certificate{CertPEM: cert.CertPEM}, certFile, ""); err != nil {
		return nil, err
	}
	if listen == "" {
		listen = "127.0.0.1"
	}
	stats := filepath.Join(c.Dir, "client-stats.json")
	args := append([]string{"client", "--server", server, "--server-name", transport.ServerName,
		"--listen", listen, "--channels", strconv.Itoa(channels), "--stats", stats}, commonArgs(c, certFile)...)
	e, err := startEnd(ctx, s, bin, args)
	if err != nil {
		return nil, fmt.Errorf("quinncarrier: the client end: %w", err)
	}
	e.stats = stats
	if n := len(e.ready.Channels); n != channels {
		e.kill()
		return nil, fmt.Errorf("quinncarrier: the client end listens for %d channels, not %d", n, channels)
	}
	return e, nil
}

// ChannelAddrs are the client end's TCP addresses, one per channel: a
// connection made to the i'th is carried to the server end's i'th target.
func (c *Carrier) ChannelAddrs() []string { return append([]string(nil), c.ready[1].Channels...) }

// Ready is what each end printed when it was ready.
func (c *Carrier) Ready() (server, client Ready) { return c.ready[0], c.ready[1] }

// Stop asks both ends to stop (SIGTERM; SIGKILL after a few seconds),
// waits for them, and reads back what each recorded.
func (c *Carrier) Stop() (Report, error) {
	var r Report
	var cerr, serr error
	r.Client, cerr = c.client.Stop()
	r.Server, serr = c.server.Stop()
	return r, errors.Join(cerr, serr)
}

// Kill kills both ends at once (SIGKILL) and waits for them. They leave
// no stats.
func (c *Carrier) Kill() {
	c.client.Kill()
	c.server.Kill()
}

// End is one running end of the carrier, started alone by StartServer
// or StartClient.
type End struct {
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	stderr *tail
	ready  Ready
	stats  string
	once   sync.Once
	stop   error
	ended  EndStats
}

// Ready is what the end printed when it was ready.
func (e *End) Ready() Ready { return e.ready }

// Stop asks the end to stop (SIGTERM; SIGKILL after a few seconds), waits
// for it and reads back what it recorded. Later calls return the first's
// result.
func (e *End) Stop() (EndStats, error) {
	if e == nil {
		return EndStats{}, nil
	}
	e.once.Do(func() {
		err := e.terminate()
		b, rerr := os.ReadFile(e.stats)
		if rerr == nil {
			rerr = json.Unmarshal(b, &e.ended)
		}
		if rerr != nil {
			rerr = fmt.Errorf("quinncarrier: reading %s: %w", filepath.Base(e.stats), rerr)
		}
		e.stop = errors.Join(err, rerr)
	})
	return e.ended, e.stop
}

// Kill kills the end (SIGKILL) and waits for it. It leaves no stats.
func (e *End) Kill() {
	if e == nil {
		return
	}
	e.once.Do(func() {
		e.kill()
		e.stop = errors.New("quinncarrier: the end was killed")
	})
}

// startEnd starts bin with args (at s, or here) and waits for its ready
// line.
func startEnd(ctx context.Context, s Starter, bin string, args []string) (*End, error) {
	cmd := exec.Command(bin, args...)
	e := &End{cmd: cmd, done: make(chan struct{}), stderr: &tail{max: 4096}}
	cmd.Stderr = e.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if ns, ok := s.(nsStarter); ok {
		err = ns.start(cmd, e.done)
	} else if s == nil {
		err = startHere(cmd, e.done)
	} else {
		err = s.Start(cmd)
	}
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	lines := make(chan Ready, 1)
	bad := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		first := true
		for sc.Scan() {
			if !first {
				continue
			}
			first = false
			var r Ready
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				bad <- fmt.Errorf("its first line is not its ready line: %q: %w", sc.Text(), err)
				continue
			}
			lines <- r
		}
		_, _ = io.Copy(io.Discard, out)
		e.err = cmd.Wait()
		close(e.done)
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case r := <-lines:
		e.ready = r
		return e, nil
	case err = <-bad:
	case <-e.done:
		err = fmt.Errorf("it exited before it was ready (%v): %s", e.err, e.stderr.String())
	case <-timer.C:
		err = fmt.Errorf("not ready within %v: %s", readyTimeout, e.stderr.String())
	case <-ctx.Done():
		err = ctx.Err()
	}
	e.kill()
	return nil, err
}

func (e *End) terminate() error {
	if e == nil {
		return nil
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(stopTimeout):
		e.kill()
		return fmt.Errorf("quinncarrier: %s did not stop within %v of SIGTERM, and was killed", e.cmd.Args[1], stopTimeout)
	}
	if e.err != nil {
		return fmt.Errorf("quinncarrier: the %s end: %w: %s", e.cmd.Args[1], e.err, e.stderr.String())
	}
	return nil
}

func (e *End) kill() {
	if e == nil {
		return
	}
	_ = e.cmd.Process.Kill()
	<-e.done
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}
