package calibrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shakenfist/quicbench/shapedlink"
)

// gsoLossRun is the GSOLoss measurement on a fresh link of profile p: a
// sender in the server's namespace writes numbered datagrams with
// UDP_SEGMENT, paced to c.GSOPacePct of the down rate for
// c.GSOTime; a receiver in the client's namespace, with UDP_GRO where
// the kernel takes it, marks each one seen. The loss it counts, and the
// mean length of its bursts, are judged against the down direction's loss
// model when nothing else dropped datagrams.
func gsoLossRun(ctx context.Context, c Config, p shapedlink.Profile, opts shapedlink.Options) *GSOLoss {
	down := p.Direction(shapedlink.Down)
	want, burst, inflation := lossModel(down)
	g := &GSOLoss{Profile: p.String(), Offload: opts.Offload.String(), LossWantPct: want, BurstWant: burst, Inflation: inflation, PacePct: c.GSOPacePct, Payload: gsoPayload}
	pl, err := planGSO(down.RateMbit, c.GSOPacePct, down.Limit, c.GSOTime)
	if err != nil {
		g.Error = err.Error()
		return g
	}
	g.Batch = pl.batch
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		g.Error = err.Error()
		return g
	}
	defer l.Close()
	g.Backend, g.Applied = string(l.Backend()), l.Applied()
	if err := gsoFlood(ctx, l, pl, p.RoundTrip(), g); err != nil {
		g.Error = err.Error()
	}
	return g
}

// gsoFlood sends pl's datagrams across l and fills g with what the
// receiver, the shaper and both namespaces' UDP counters saw.
func gsoFlood(ctx context.Context, l *shapedlink.Link, pl gsoPlan, rtt time.Duration, g *GSOLoss) error {
	srv, err := udpIn(l.Server(), ipOf(l.ServerAddr()))
	if err != nil {
		return err
	}
	defer srv.Close()
	cli, err := udpIn(l.Client(), ipOf(l.ClientAddr()))
	if err != nil {
		return err
	}
	defer cli.Close()
	if err := setSockInt(srv, unix.IPPROTO_UDP, unix.UDP_SEGMENT, gsoPayload); err != nil {
		return fmt.Errorf("the sender's UDP_SEGMENT (segmentation offload for UDP, Linux 4.18 and later): %w", err)
	}
	g.GRO = setSockInt(cli, unix.IPPROTO_UDP, unix.UDP_GRO, 1) == nil
	if setSockInt(cli, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 32<<20) != nil {
		_ = cli.SetReadBuffer(32 << 20) // capped by net.core.rmem_max
	}
	rcv0, _ := udpCounter(l.Client(), "RcvbufErrors")
	snd0, _ := udpCounter(l.Server(), "SndbufErrors")
	sh0, _ := l.Instruments().ShaperStats()
	got := make(chan gsoRecord, 1)
	go func() { got <- gsoReceive(cli, pl.total) }()
	start := time.Now()
	sent, serr := gsoSend(ctx, srv, cli.LocalAddr().(*net.UDPAddr), pl)
	g.Sent, g.Seconds = sent, time.Since(start).Seconds()
	// The last datagrams are a one-way delay and a queue away.
	select {
	case <-time.After(rtt + 500*time.Millisecond):
	case <-ctx.Done():
	}
	cli.Close()
	rec := <-got
	rcv1, err1 := udpCounter(l.Client(), "RcvbufErrors")
	snd1, err2 := udpCounter(l.Server(), "SndbufErrors")
	if err := firstErr(serr, ctx.Err(), err1, err2); err != nil {
		return err
	}
	g.RcvbufErrors, g.SndbufErrors = rcv1-rcv0, snd1-snd0
	if sh1, ok := l.Instruments().ShaperStats(); ok && len(sh1.Directions) > 0 && len(sh0.Directions) > 0 {
		a, b := sh0.Directions[0], sh1.Directions[0]
		g.Shaper = true
		g.ShaperReceived, g.ShaperLossDrops = b.Received-a.Received, b.LossDrops-a.LossDrops
		g.LimitDrops, g.SendErrors, g.SocketDrops = b.LimitDrops-a.LimitDrops, b.SendErrors-a.SendErrors, b.SocketDrops-a.SocketDrops
		g.OtherDrops = b.OversizeDrops - a.OversizeDrops + b.UnreadableDrops - a.UnreadableDrops
		g.SuperPacketsIn, g.SuperPacketsOut = b.SuperPacketsIn-a.SuperPacketsIn, b.SuperPacketsOut-a.SuperPacketsOut
	}
	g.judge(rec)
	return nil
}

// gsoSend writes pl's datagrams to to, pl.batch per write (the socket
// has UDP_SEGMENT, so the kernel cuts each write into datagrams), the
// writes pl.gap apart on a schedule, and returns how many datagrams it
// sent. A sender that wakes late catches up by at most one write: a
// longer burst could fill the link's limit, and a drop there is not the
// configured loss.
func gsoSend(ctx context.Context, srv *net.UDPConn, to *net.UDPAddr, pl gsoPlan) (int, error) {
	buf := make([]byte, pl.batch*gsoPayload)
	start := time.Now()
	for w := 0; w < pl.writes; w++ {
		if err := ctx.Err(); err != nil {
			return w * pl.batch, err
		}
		due := start.Add(time.Duration(w) * pl.gap)
		if late := time.Since(due); late > pl.gap {
			start = start.Add(late - pl.gap) // forgo the rest of the debt
		} else if late < 0 {
			time.Sleep(-late)
		}
		for i := 0; i < pl.batch; i++ {
			binary.BigEndian.PutUint32(buf[i*gsoPayload:], uint32(w*pl.batch+i))
		}
		if _, err := srv.WriteToUDP(buf, to); err != nil {
			return w * pl.batch, fmt.Errorf("the UDP_SEGMENT sender: %w", err)
		}
	}
	return pl.writes * pl.batch, nil
}

// gsoReceive reads cli until it is closed and records the datagrams of
// each read, split by the segment size its UDP_GRO control message gives.
func gsoReceive(cli *net.UDPConn, total int) gsoRecord {
	rec := gsoRecord{seen: make([]bool, total)}
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(4)*4)
	for {
		n, oobn, _, _, err := cli.ReadMsgUDP(buf, oob)
		if err != nil {
			return rec
		}
		rec.take(buf[:n], groSize(oob[:oobn]))
	}
}

// groSize is the segment size in a read's UDP_GRO control message, or 0
// when it has none (the read is one datagram).
func groSize(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_UDP && m.Header.Type == unix.UDP_GRO && len(m.Data) >= 4 {
			return int(int32(binary.NativeEndian.Uint32(m.Data)))
		}
	}
	return 0
}

// setSockInt sets an integer socket option on c.
func setSockInt(c *net.UDPConn, level, opt, v int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, v) }); err != nil {
		return err
	}
	return serr
}

// udpCounter is counter name of the Udp section of ns's /proc/net/snmp.
func udpCounter(ns *shapedlink.Namespace, name string) (uint64, error) {
	var v uint64
	err := ns.Do(func() error {
		// thread-self: this thread is the one switched into ns.
		b, err := os.ReadFile("/proc/thread-self/net/snmp")
		v = snmpCounter(string(b), "Udp:", name)
		return err
	})
	return v, err
}

// firstErr is the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
