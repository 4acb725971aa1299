package measure

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// quicCarrier is the control for the quinn arms' carrier: the workload's
// channels go as they do for Quinn (a loopback TCP connection per channel
// to a carrier end at each role), and the carrier is quic-go with the quic
// arm's settings (transport.DialCarrier and ListenCarrier, ArmQUIC), run
// by goroutines in the role's own process (docs/quinn.md).
const quicCarrier = Arm("quic-carrier")

// relayDrain bounds how long a closing carrier end waits for its relays
// to pass the last bytes and half-closes on before it closes the carrier.
const relayDrain = 2 * time.Second

// quicCarrierArm is the quic-carrier arm.
type quicCarrierArm struct{}

func (quicCarrierArm) Name() string { return string(quicCarrier) }

func (quicCarrierArm) QUIC() bool { return true }

// Prepare is the quic arm's: a certificate for both ends.
func (quicCarrierArm) Prepare(o transport.Options, w spicelike.Config) (server, client transport.Options, err error) {
	return transportArm{transport.ArmQUIC}.Prepare(o, w)
}

func (a quicCarrierArm) Listen(ctx context.Context, addr string, o transport.Options) (ArmListener, error) {
	targets, err := localListeners(ctx, a.Name(), o, o.Channels)
	if err != nil {
		return nil, err
	}
	cl, err := transport.ListenCarrier(ctx, transport.ArmQUIC, addr, o)
	if err != nil {
		closeListeners(targets)
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &qcServerEnd{ln: cl, cancel: cancel}
	e.accepting.Go(func() { e.accept(runCtx, o, listenerAddrs(targets)) })
	return &carriedListener{arm: a.Name(), targets: targets, end: e, addr: cl.Addr()}, nil
}

func (a quicCarrierArm) Dial(ctx context.Context, addr string, o transport.Options) (ArmSession, error) {
	s := &carriedSession{arm: a.Name(), role: "client", started: time.Now()}
	local, err := localListeners(ctx, a.Name(), o, o.Channels)
	if err != nil {
		return nil, err
	}
	e := &qcClientEnd{local: local}
	s.end = e
	if e.carrier, err = transport.DialCarrier(ctx, transport.ArmQUIC, addr, o); err != nil {
		s.Close()
		return nil, err
	}
	for _, l := range local {
		ch, err := e.carrier.Open(ctx)
		if err != nil {
			s.Close()
			return nil, err
		}
		e.relays.Go(func() {
			conn, err := l.Accept()
			if err != nil {
				ch.Close()
				return
			}
			relay(conn, ch)
		})
	}
	if s.chans, err = dialLocal(ctx, a.Name(), o, listenerAddrs(local)); err != nil {
		s.Close()
		return nil, err
	}
	s.connect = time.Since(s.started)
	return s, nil
}

// relay copies conn to ch and ch to conn, passing each half-close on
// (a connection without CloseWrite is closed instead), until both
// directions end, then closes both.
func relay(conn net.Conn, ch transport.CarrierChannel) {
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(conn, ch)
		if hc, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		} else {
			conn.Close()
		}
	})
	_, _ = io.Copy(ch, conn)
	_ = ch.CloseWrite()
	wg.Wait()
	conn.Close()
	ch.Close()
}

// waitRelays waits for wg, or at most relayDrain.
func waitRelays(wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(relayDrain):
	}
}

// qcClientEnd is the client's quic-go carrier end: a local listener per
// channel, each connection relayed to the carrier's channel of that index.
type qcClientEnd struct {
	local   []net.Listener
	carrier *transport.Carrier
	relays  sync.WaitGroup
	once    sync.Once
	err     error
}

func (e *qcClientEnd) state(st *transport.State) {
	if e.carrier != nil {
		carrierInto(st, e.carrier.State())
	}
}

func (e *qcClientEnd) stop() error {
	e.once.Do(func() {
		closeListeners(e.local)
		waitRelays(&e.relays)
		if e.carrier != nil {
			e.err = e.carrier.Close()
		}
	})
	return e.err
}

// qcServerEnd is the server's quic-go carrier end: each channel it accepts
// is relayed to a connection to that channel's target.
type qcServerEnd struct {
	ln        *transport.CarrierListener
	cancel    context.CancelFunc
	accepting sync.WaitGroup
	relays    sync.WaitGroup
	once      sync.Once
	err       error
}

// accept relays every channel the listener hands over until it closes.
func (e *qcServerEnd) accept(ctx context.Context, o transport.Options, targets []string) {
	for {
		ch, err := e.ln.Accept(ctx)
		if err != nil {
			var ce *transport.ChannelError
			if errors.As(err, &ce) && ctx.Err() == nil {
				continue
			}
			return
		}
		e.relays.Go(func() {
			i := ch.Index()
			if i < 0 || i >= len(targets) {
				ch.Close()
				return
			}
			conns, err := dialLocal(ctx, string(quicCarrier), o, targets[i:i+1])
			if err != nil {
				ch.Close()
				return
			}
			relay(conns[0], ch)
		})
	}
}

func (e *qcServerEnd) state(st *transport.State) { carrierInto(st, e.ln.State()) }

func (e *qcServerEnd) stop() error {
	e.once.Do(func() {
		waitRelays(&e.relays)
		e.cancel()
		e.err = e.ln.Close()
		e.accepting.Wait()
	})
	return e.err
}

// carrierInto puts what a quic-go carrier end had in force in st, keeping
// st's arm, role, channels and times.
func carrierInto(st *transport.State, c transport.State) {
	st.CongestionControl, st.RequestedCongestionControl, st.HostCongestionControl = c.CongestionControl, c.RequestedCongestionControl, c.HostCongestionControl
	st.Priority, st.QUIC = c.Priority, c.QUIC
}
