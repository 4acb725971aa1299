package quinncarrier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

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
