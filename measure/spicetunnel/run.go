package spicetunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// EndConfig is one end of the tunnel run on its own (RunEnd): its
// listener, its carrier, its certificate files and its trace file.
type EndConfig struct {
	// Side is which end: spicetrace.SideClient (where the SPICE client
	// connects) or spicetrace.SideServer (next to spice-server).
	Side string
	// Arm is how channels are carried: an arm with carriers (tcp,
	// quic, quic-per-channel, tcp-mux).
	Arm transport.Arm
	// Listen is the address to listen on: the SPICE client's (client end)
	// or the carriers' (server end).
	Listen string
	// Server is the server end's address (client end).
	Server string
	// Spice is spice-server's plain TCP address (server end).
	Spice string
	// CertFile and KeyFile are the QUIC arms' certificate and its private
	// key (PEM). The server end reads both, or makes a new self-signed
	// pair and writes both when neither file exists; the client end reads
	// CertFile only. The tcp arm uses neither.
	CertFile, KeyFile string
	// TraceFile, when set, is created and receives the message trace
	// (spicetrace's JSON lines).
	TraceFile string
	// CaptureDir, when set, receives every connection's raw bytes (see
	// ClientEnd.CaptureDir).
	CaptureDir string
	// Options are the carrier's transport options. CarrierSecret is
	// required, the same at both ends; CongestionControl pins the tcp
	// arm's; CarrierLimit and CarrierPeerLimit bound the server end.
	// Certificate is read from the files.
	Options transport.Options
}

// check says what is wrong with c, or nil.
func (c EndConfig) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch c.Side {
	case spicetrace.SideClient:
		if c.Server == "" {
			bad("the client end needs Server, the server end's address")
		}
		if measure.Arm(c.Arm).QUIC() && c.CertFile == "" {
			bad("arm %s needs CertFile, the server end's certificate", c.Arm)
		}
	case spicetrace.SideServer:
		if c.Spice == "" {
			bad("the server end needs Spice, spice-server's address")
		}
		if measure.Arm(c.Arm).QUIC() && (c.CertFile == "" || c.KeyFile == "") {
			bad("arm %s needs CertFile and KeyFile (made when neither file exists)", c.Arm)
		}
	default:
		bad("side %q: want %q or %q", c.Side, spicetrace.SideClient, spicetrace.SideServer)
	}
	if c.Listen == "" {
		bad("Listen is empty: give the address to listen on")
	}
	if len(c.Options.CarrierSecret) == 0 {
		bad("Options.CarrierSecret is empty: without it anyone who reaches the server end reaches spice-server; give both ends the same secret")
	}
	return errors.Join(errs...)
}

// RunEnd runs one end of the tunnel until ctx ends, then flushes its
// trace and returns what every channel carried (empty, not nil, when none
// was). The server end listens for carriers and relays each channel to a
// new connection to spice-server (a ServerEnd); the client end dials the
// carrier, listens for the SPICE client and carries each of its
// connections (a ClientEnd). It fails when c is incomplete, a file cannot
// be read or made, or the listener fails.
func RunEnd(ctx context.Context, c EndConfig, log *slog.Logger) ([]ChannelStats, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	log = logger(log)
	o := c.Options
	if measure.Arm(c.Arm).QUIC() {
		cert, err := loadCertificate(c.Side, c.CertFile, c.KeyFile)
		if err != nil {
			return nil, err
		}
		o.Certificate = cert
	}
	var tracer *Tracer
	if c.TraceFile != "" {
		f, err := os.Create(c.TraceFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if tracer, err = NewTracer(f, c.Side, "arm "+string(c.Arm)); err != nil {
			return nil, err
		}
		defer func() {
			if err := tracer.Flush(); err != nil {
				log.Error("writing the trace", "file", c.TraceFile, "err", err)
			}
		}()
	}
	if c.Side == spicetrace.SideServer {
		ln, err := measure.ListenCarrier(ctx, c.Arm, c.Listen, o)
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		log.Info("listening for carriers", "arm", c.Arm, "addr", ln.Addr().String(), "spice", c.Spice)
		end := &ServerEnd{Listener: ln, Trace: tracer, Log: log, CaptureDir: c.CaptureDir, Dial: func(ctx context.Context) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", c.Spice)
		}}
		err = end.Serve(ctx)
		return end.Channels(), err
	}
	carrier, err := measure.DialCarrier(ctx, c.Arm, c.Server, o)
	if err != nil {
		return nil, err
	}
	defer carrier.Close()
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return nil, err
	}
	log.Info("listening for the SPICE client", "arm", c.Arm, "addr", ln.Addr().String(), "server", c.Server)
	end := &ClientEnd{Listener: ln, Carrier: carrier, Trace: tracer, Log: log, CaptureDir: c.CaptureDir}
	err = end.Serve(ctx)
	return end.Channels(), err
}

// loadCertificate reads the QUIC arms' certificate for side: on the
// client end the certificate alone, on the server end the certificate and
// its key, making a new self-signed pair and writing it (the key private)
// when neither file exists.
func loadCertificate(side, certFile, keyFile string) (transport.Certificate, error) {
	certPEM, cerr := os.ReadFile(certFile)
	if side == spicetrace.SideClient {
		if cerr != nil {
			return transport.Certificate{}, fmt.Errorf("reading -cert: %w (the server end writes it)", cerr)
		}
		return transport.Certificate{CertPEM: certPEM}, nil
	}
	keyPEM, kerr := os.ReadFile(keyFile)
	switch {
	case cerr == nil && kerr == nil:
		return transport.Certificate{CertPEM: certPEM, KeyPEM: keyPEM}, nil
	case errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist):
		cert, err := transport.NewCertificate()
		if err != nil {
			return cert, err
		}
		if err := os.WriteFile(keyFile, cert.KeyPEM, 0o600); err != nil {
			return cert, err
		}
		return cert, os.WriteFile(certFile, cert.CertPEM, 0o644)
	case cerr != nil:
		return transport.Certificate{}, fmt.Errorf("reading -cert: %w (remove both files to have new ones made)", cerr)
	default:
		return transport.Certificate{}, fmt.Errorf("reading -key: %w (remove both files to have new ones made)", kerr)
	}
}
