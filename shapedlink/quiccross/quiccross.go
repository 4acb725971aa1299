package quiccross

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

func init() { shapedlink.RegisterCrossRunner("quic", runner{}) }

// runner is the shapedlink.CrossRunner for QUIC cross flows.
type runner struct{}

var (
	certOnce sync.Once
	cert     transport.Certificate
	certErr  error
)

// tlsConfigs is one certificate's server and client configurations, made
// once per process.
func tlsConfigs() (server, client *tls.Config, err error) {
	certOnce.Do(func() { cert, certErr = transport.NewCertificate() })
	if certErr != nil {
		return nil, nil, certErr
	}
	return cert.TLSConfigs("quicbench-cross/1")
}

func config() *quic.Config {
	return &quic.Config{
		InitialStreamReceiveWindow:     transport.StreamReceiveWindow,
		MaxStreamReceiveWindow:         transport.StreamReceiveWindow,
		InitialConnectionReceiveWindow: transport.ConnectionReceiveWindow,
		MaxConnectionReceiveWindow:     transport.ConnectionReceiveWindow,
		InitialPacketSize:              transport.DatagramSize,
		DisablePathMTUDiscovery:        true,
		MaxIdleTimeout:                 30 * time.Second,
		KeepAlivePeriod:                5 * time.Second,
	}
}

// listen opens a UDP socket in ns at addr, without GSO, under a quic-go
// transport.
func listen(ctx context.Context, ns *shapedlink.Namespace, addr string) (*quic.Transport, error) {
	pc, err := ns.ListenPacket(ctx, "udp", addr)
	if err != nil {
		return nil, err
	}
	w, err := transport.WithoutGSO(pc)
	if err != nil {
		pc.Close()
		return nil, err
	}
	return &quic.Transport{Conn: w}, nil
}

// Receive accepts connections in ns at addr until ctx ends and counts the
// bytes of every stream they open.
func (runner) Receive(ctx context.Context, ns *shapedlink.Namespace, addr netip.AddrPort, count func(int)) (netip.AddrPort, error) {
	srvTLS, _, err := tlsConfigs()
	if err != nil {
		return netip.AddrPort{}, err
	}
	tr, err := listen(ctx, ns, addr.String())
	if err != nil {
		return netip.AddrPort{}, err
	}
	ln, err := tr.Listen(srvTLS, config())
	if err != nil {
		tr.Conn.Close()
		return netip.AddrPort{}, err
	}
	context.AfterFunc(ctx, func() {
		ln.Close()
		tr.Close()
		tr.Conn.Close()
	})
	go func() {
		for {
			conn, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					st, err := conn.AcceptStream(ctx)
					if err != nil {
						return
					}
					go drain(st, count)
				}
			}()
		}
	}()
	return netip.MustParseAddrPort(tr.Conn.LocalAddr().String()), nil
}

func drain(st *quic.Stream, count func(int)) {
	buf := make([]byte, 64<<10)
	for {
		n, err := st.Read(buf)
		if n > 0 {
			count(n)
		}
		if err != nil {
			return
		}
	}
}

// Send dials to from ns, opens one stream and writes to it until ctx ends.
func (runner) Send(ctx context.Context, ns *shapedlink.Namespace, to netip.AddrPort) (shapedlink.CrossSender, error) {
	_, cliTLS, err := tlsConfigs()
	if err != nil {
		return nil, err
	}
	tr, err := listen(ctx, ns, ":0")
	if err != nil {
		return nil, err
	}
	conn, err := tr.Dial(ctx, net.UDPAddrFromAddrPort(to), cliTLS, config())
	if err != nil {
		tr.Conn.Close()
		return nil, err
	}
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		conn.CloseWithError(0, "")
		tr.Conn.Close()
		return nil, err
	}
	s := &sender{conn: conn, tr: tr, done: make(chan struct{})}
	go s.run(ctx, st)
	return s, nil
}

// sender is one QUIC cross flow's sending end.
type sender struct {
	conn *quic.Conn
	tr   *quic.Transport
	done chan struct{}
	err  error
}

func (s *sender) run(ctx context.Context, st *quic.Stream) {
	defer close(s.done)
	stop := context.AfterFunc(ctx, func() { st.CancelWrite(0) })
	defer stop()
	buf := make([]byte, 64<<10)
	for {
		if _, err := st.Write(buf); err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			break
		}
	}
	s.conn.CloseWithError(0, "")
	s.tr.Close()
	s.tr.Conn.Close()
}

// Stats reads quic-go's connection statistics: packets sent and declared
// lost.
func (s *sender) Stats() shapedlink.CrossSent {
	cs := s.conn.ConnectionStats()
	return shapedlink.CrossSent{CC: transport.QUICCongestionControl, SentPackets: cs.PacketsSent, Retransmits: cs.PacketsLost}
}

func (s *sender) Wait() error {
	<-s.done
	return s.err
}
