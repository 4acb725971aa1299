package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/transport"
)

// config is what the command line asks for.
type config struct {
	end     string // "client" or "server"
	arm     transport.Arm
	listen  string
	server  string // client end: the server end's address
	spice   string // server end: spice-server's address
	cert    string
	key     string
	trace   string
	capture string
	cc      string
	secret  string // the secret file
	limit   int    // server end: transport.Options.CarrierLimit
	peer    int    // server end: transport.Options.CarrierPeerLimit
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("spicetunnel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	end := fs.String("end", "", "which end to run: client (where the SPICE client connects) or server (next to spice-server)")
	arm := fs.String("arm", "tcp", "how channels are carried: tcp, quic, quic-per-channel, tcp-mux, tcp-<controller> (tcp-bbr, ...) "+
		"or quinn-<controller> (quinn-cubic, quinn-newreno, quinn-bbr: quinn's carrier, whose ends this process starts; docs/quinn.md)")
	listen := fs.String("listen", "", "address to listen on: the SPICE client's (client end) or the carrier's (server end)")
	server := fs.String("server", "", "client end: the server end's address")
	spice := fs.String("spice", "", "server end: spice-server's address (plain TCP, not its TLS port)")
	cert := fs.String("cert", "", "QUIC arms (quinn's too): the certificate (PEM); the server end makes it, with -key, when neither file exists")
	key := fs.String("key", "", "QUIC arms, server end: the certificate's private key (PEM)")
	trace := fs.String("trace", "", "write the message trace (JSON lines) to this file; empty for none")
	capture := fs.String("capture", "", "write every connection's raw bytes into this existing directory, as new files "+
		"<carrier>-ch<N>-c2s.bin and <carrier>-ch<N>-s2c.bin")
	cc := fs.String("cc", "", "tcp and tcp-mux arms: TCP congestion control of the carrier's connections (empty: the host default, recorded)")
	secret := fs.String("secret-file", "", "the secret both ends share (mode 0600, at least 16 bytes): the client end proves it holds it "+
		"for every channel, and the server end refuses a channel without the proof")
	limit := fs.Int("limit", 0, fmt.Sprintf("server end: the most channels held at once, from all peers (0: %d)", transport.DefaultCarrierLimit))
	peer := fs.Int("peer-limit", 0, fmt.Sprintf("server end: the most channels held at once from one address (0: %d)", transport.DefaultCarrierPeerLimit))
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: spicetunnel -end client|server [flags]\n\n"+
			"Carries a SPICE session's channels over a transport arm and traces every message.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return config{}, err
	}
	c := config{end: *end, listen: *listen, server: *server, spice: *spice, cert: *cert, key: *key, trace: *trace, capture: *capture, cc: *cc,
		secret: *secret, limit: *limit, peer: *peer}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	a, err := measure.ParseCarrierArm(*arm)
	if err != nil {
		errs = append(errs, fmt.Errorf("-arm: %w", err))
	}
	c.arm = a
	if c.listen == "" {
		bad("-listen is empty: give the address to listen on, e.g. -listen 127.0.0.1:5900")
	}
	switch c.end {
	case "client":
		if c.server == "" {
			bad("-end client needs -server, the server end's address")
		}
		if measure.Arm(c.arm).QUIC() && c.cert == "" {
			bad("-arm %s needs -cert, the server end's certificate file", c.arm)
		}
	case "server":
		if c.spice == "" {
			bad("-end server needs -spice, spice-server's address")
		}
		if measure.Arm(c.arm).QUIC() && (c.cert == "" || c.key == "") {
			bad("-arm %s needs -cert and -key (made when neither file exists)", c.arm)
		}
	default:
		bad("-end %q: want client or server", c.end)
	}
	if c.secret == "" {
		bad("-secret-file is required at both ends, so that no one else reaches spice-server through the tunnel: make one with " +
			"`head -c 32 /dev/urandom | base64 > tunnel.secret; chmod 600 tunnel.secret` and give it to both ends")
	}
	if c.limit < 0 || c.peer < 0 {
		bad("-limit %d, -peer-limit %d: give positive bounds, or 0 for the defaults", c.limit, c.peer)
	}
	if (c.limit != 0 || c.peer != 0) && c.end == "client" {
		bad("-limit and -peer-limit apply to the server end")
	}
	if c.cc != "" && measure.Arm(c.arm).QUIC() {
		bad("-cc applies to the tcp and tcp-mux arms only: quic-go's congestion control is fixed (%s), quinn-<controller> names quinn's", transport.QUICCongestionControl)
	}
	return c, errors.Join(errs...)
}

func main() {
	gorun.Follow()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return cli.Exit(stderr, "spicetunnel", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("end", c.end)
	stats, err := runEnd(ctx, c, log)
	if err != nil {
		fmt.Fprintln(stderr, "spicetunnel:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(stats)
	return 0
}

// runEnd runs the configured end until ctx ends and returns what every
// channel carried.
func runEnd(ctx context.Context, c config, log *slog.Logger) ([]spicetunnel.ChannelStats, error) {
	secret, err := twohost.ReadSecretFile(c.secret)
	if err != nil {
		return nil, err
	}
	return spicetunnel.RunEnd(ctx, spicetunnel.EndConfig{Side: c.end, Arm: c.arm, Listen: c.listen, Server: c.server, Spice: c.spice,
		CertFile: c.cert, KeyFile: c.key, TraceFile: c.trace, CaptureDir: c.capture,
		Options: transport.Options{CongestionControl: c.cc, CarrierLimit: c.limit, CarrierPeerLimit: c.peer, CarrierSecret: secret}}, log)
}
