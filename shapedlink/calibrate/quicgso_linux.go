package calibrate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// quicGSORun is the QUICGSO measurement on a fresh link of profile p:
// one quic-go bulk transfer from the server's namespace to the client's
// for c.Bulk, on plain UDP sockets (so quic-go uses GSO where the kernel
// has it), its goodput over the last two thirds, and the shaper's
// per-datagram loss in that direction against the direction's loss model.
func quicGSORun(ctx context.Context, c Config, p shapedlink.Profile, opts shapedlink.Options) *QUICGSO {
	down := p.Direction(shapedlink.Down)
	want, _, inflation := lossModel(down)
	q := &QUICGSO{Profile: p.String(), Offload: opts.Offload.String(), RateMbit: down.RateMbit, LossWantPct: want, Inflation: inflation}
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		q.Error = err.Error()
		return q
	}
	defer l.Close()
	q.Backend, q.Applied = string(l.Backend()), l.Applied()
	if err := quicTransfer(ctx, l, c.Bulk, q); err != nil {
		q.Error = err.Error()
		return q
	}
	q.GoodputPct = 100 * q.GoodputMbit / q.RateMbit
	if sh, ok := l.Instruments().ShaperStats(); ok && len(sh.Directions) > 0 {
		d := sh.Directions[0] // server->client, the data's direction
		q.Shaper = true
		q.ShaperReceived, q.ShaperLossDrops = d.Received, d.LossDrops
		q.LimitDrops, q.SocketDrops, q.SendErrors = d.LimitDrops, d.SocketDrops, d.SendErrors
		q.SuperPacketsIn, q.SuperPacketsOut = d.SuperPacketsIn, d.SuperPacketsOut
		if d.Received > 0 {
			lo, hi := wilsonEffective(int(d.LossDrops), int(d.Received), q.Inflation)
			q.LossPct, q.LossLoPct, q.LossHiPct = 100*float64(d.LossDrops)/float64(d.Received), 100*lo, 100*hi
			q.Inside = q.LossWantPct >= q.LossLoPct && q.LossWantPct <= q.LossHiPct
		}
	}
	return q
}

// quicTransfer runs the transfer across l for d and fills q's goodput
// (the client's bytes read over the last two thirds of d) and whether
// the server's connection used GSO.
func quicTransfer(ctx context.Context, l *shapedlink.Link, d time.Duration, q *QUICGSO) error {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	spc, err := l.Server().ListenPacket(ctx, "udp", net.JoinHostPort(l.ServerAddr().String(), "0"))
	if err != nil {
		return err
	}
	defer spc.Close()
	cpc, err := l.Client().ListenPacket(ctx, "udp", net.JoinHostPort(l.ClientAddr().String(), "0"))
	if err != nil {
		return err
	}
	defer cpc.Close()
	cert, err := transport.NewCertificate()
	if err != nil {
		return err
	}
	serverTLS, clientTLS, err := cert.TLSConfigs("calibrate")
	if err != nil {
		return err
	}
	str := &quic.Transport{Conn: spc}
	defer str.Close()
	ln, err := str.Listen(serverTLS, &quic.Config{})
	if err != nil {
		return err
	}
	defer ln.Close()
	served := make(chan *quic.Conn, 1)
	go quicServe(ctx, ln, served)
	ctr := &quic.Transport{Conn: cpc}
	defer ctr.Close()
	conn, err := ctr.Dial(ctx, spc.LocalAddr(), clientTLS, &quic.Config{})
	if err != nil {
		return fmt.Errorf("quic-go dial: %w", err)
	}
	defer conn.CloseWithError(0, "done")
	st, err := conn.AcceptUniStream(ctx)
	if err != nil {
		return fmt.Errorf("quic-go: the server's stream: %w", err)
	}
	mbit, secs, err := readWindow(st, d)
	if err != nil {
		return err
	}
	q.GoodputMbit, q.Seconds = mbit, secs
	select {
	case sc := <-served:
		q.GSO = sc.ConnectionState().GSO
	case <-ctx.Done():
		return errors.New("quic-go: the server's connection was never reported")
	}
	return nil
}

// quicServe accepts one connection on ln, reports it on served, and
// writes zeros to a stream of its own until the client closes.
func quicServe(ctx context.Context, ln *quic.Listener, served chan<- *quic.Conn) {
	conn, err := ln.Accept(ctx)
	if err != nil {
		return
	}
	served <- conn
	st, err := conn.OpenUniStreamSync(ctx)
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := st.Write(buf); err != nil {
			return
		}
	}
}

// readWindow reads st for d from its first byte and returns the goodput
// over the last two thirds of it, in Mbit/s, and that window's length.
func readWindow(st *quic.ReceiveStream, d time.Duration) (mbit, secs float64, err error) {
	buf := make([]byte, 64<<10)
	var n int64
	k, err := st.Read(buf)
	if err != nil {
		return 0, 0, fmt.Errorf("quic-go: reading the stream: %w", err)
	}
	start := time.Now()
	n += int64(k)
	mark, end := start.Add(d/3), start.Add(d)
	if err := st.SetReadDeadline(end); err != nil {
		return 0, 0, err
	}
	var nMark int64 = -1
	var tMark time.Time
	for {
		k, err := st.Read(buf)
		n += int64(k)
		now := time.Now()
		if nMark < 0 && now.After(mark) {
			nMark, tMark = n, now
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			return 0, 0, fmt.Errorf("quic-go: reading the stream: %w", err)
		}
	}
	w := time.Since(tMark)
	if nMark < 0 || w <= 0 {
		return 0, 0, errors.New("quic-go: nothing arrived after the first third of the transfer")
	}
	return float64(n-nMark) * 8 / w.Seconds() / 1e6, w.Seconds(), nil
}
