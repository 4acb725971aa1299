package quinncarrier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/transport"
)

// Controllers returns the congestion controllers quinn 0.9 offers, by the
// names Config.Controller takes.
func Controllers() []string { return []string{"cubic", "bbr", "newreno"} }

// The settings the reference pinned, which every end is started with.
const (
	datagram         = 1400
	connectionWindow = transport.ConnectionReceiveWindow
	streamWindow     = transport.StreamReceiveWindow
)

// Config is one run of the carrier.
type Config struct {
	// Controller is quinn's congestion controller: one of Controllers.
	Controller string
	// InitialWindow is the controller's initial window in bytes; 0 keeps
	// quinn's default for the controller (the ends report it).
	InitialWindow int
	// Priorities, when set, are each channel's stream priority (higher is
	// sent first), one per channel.
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

// starter starts a command elsewhere, as shapedlink.Namespace.Start does
// inside a network namespace.
type starter interface {
	Start(cmd *exec.Cmd) error
}

// checkServer says what is wrong with c for a server end listening on
// listen and connecting to targets.
func (c Config) checkServer(listen string, targets []string) error {
	errs := c.checkConfig(len(targets))
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for i, t := range targets {
		if t == "" || strings.Contains(t, ",") {
			bad("quinncarrier: target %d %q is not a TCP address", i, t)
		}
	}
	if listen == "" {
		bad("quinncarrier: no UDP address for the server end to listen on: give one, ip:port")
	}
	return errors.Join(errs...)
}

// checkConfig says what is wrong with c for an end of channels channels.
func (c Config) checkConfig(channels int) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !slices.Contains(Controllers(), c.Controller) {
		bad("quinncarrier: controller %q: use one of %s", c.Controller, strings.Join(Controllers(), ", "))
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

// StartServer starts the server end alone, on this host in namespace ns
// (nil: the calling thread's), dying with this process: on UDP address listen, connecting channel i's streams to
// targets[i]. cert must hold its key; the client end gets its public half.
// It returns when the end is ready, within 20 s or with an error; End.Stop
// ends it.
func StartServer(ctx context.Context, c Config, ns *SocketNamespace, listen string, targets []string, cert transport.Certificate) (*End, error) {
	if err := c.checkServer(listen, targets); err != nil {
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
func starterOf(ns *SocketNamespace) starter {
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

func startServer(ctx context.Context, c Config, s starter, listen string, targets []string, cert transport.Certificate) (*End, error) {
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

func startClient(ctx context.Context, c Config, s starter, server, listen string, channels int, cert transport.Certificate) (*End, error) {
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
