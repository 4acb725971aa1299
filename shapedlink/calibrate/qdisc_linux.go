package calibrate

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// qdiscSeries measures each queue discipline on base: one Cubic flow from
// server to client saturating the link, and beside it a sparse flow of
// echoes 10 ms apart whose replies share the flow's direction.
func qdiscSeries(ctx context.Context, c Config, base shapedlink.Profile, discs []string, opts shapedlink.Options) []Qdisc {
	var out []Qdisc
	for _, d := range discs {
		if ctx.Err() != nil {
			break
		}
		out = append(out, qdiscRun(ctx, c, base, d, opts))
	}
	return out
}

// qdiscRun is one discipline's measurement. The first third of c.Bulk
// warms the flow up; over the rest it samples the server end's queue
// every 10 ms and sends the echoes. The standing queue is read from what
// the shaper holds: while the link is busy its delay line holds exactly
// rate x delay, so the rest, held*8/rate - delay, is the time a packet
// joining the queue waits for the rate (on netem with a discipline the
// sampler reads the discipline alone, so held*8/rate).
func qdiscRun(ctx context.Context, c Config, base shapedlink.Profile, disc string, opts shapedlink.Options) Qdisc {
	text := base.String()
	if disc != "fifo" {
		text += ",qdisc=" + disc
	}
	q := Qdisc{Discipline: disc, Profile: text}
	fail := func(err error) Qdisc { q.Error = err.Error(); return q }
	p, err := shapedlink.ParseProfile(text)
	if err != nil {
		return fail(err)
	}
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	q.Applied = l.Applied()
	down := p.Direction(shapedlink.Down)

	received, stopFlow, err := cubicFlow(ctx, l)
	if err != nil {
		return fail(err)
	}
	defer stopFlow()
	warm := c.Bulk / 3
	select {
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(warm):
	}
	window := c.Bulk - warm
	sctx, stop := context.WithTimeout(ctx, window)
	defer stop()
	samples := make(chan []shapedlink.QueueSample, 1)
	go func() {
		s, _ := l.Instruments().SampleQueue(sctx, shapedlink.ServerEnd, 10*time.Millisecond)
		samples <- s
	}()
	start, before := time.Now(), received.Load()
	rtts, sent, err := echoes(ctx, l.Client(), l.Server(), ipOf(l.ClientAddr()), ipOf(l.ServerAddr()), int(window/(10*time.Millisecond)), p.RoundTrip())
	if err != nil {
		return fail(fmt.Errorf("the sparse echoes: %w", err))
	}
	q.FlowMbit = float64(received.Load()-before) * 8 / time.Since(start).Seconds() / 1e6
	stop()
	standing := standingQueue(<-samples, l.Backend(), down)
	q.Samples = len(standing)
	q.StandingP50Ms, q.StandingP95Ms = quantile(standing, 0.5), quantile(standing, 0.95)
	extra := make([]float64, 0, len(rtts))
	for _, r := range rtts {
		extra = append(extra, float64(r-p.RoundTrip())/1e6)
	}
	q.Echoes, q.EchoesSent = len(rtts), sent
	q.SparseP50Ms, q.SparseP95Ms = quantile(extra, 0.5), quantile(extra, 0.95)
	if sh, ok := l.Instruments().ShaperStats(); ok && len(sh.Directions) > 0 {
		d := sh.Directions[0]
		q.LimitDrops, q.QueueDrops, q.CoDelDrops, q.ECNMarks = d.LimitDrops, d.QueueDrops, d.CoDelDrops, d.ECNMarks
	}
	if len(standing) == 0 || len(rtts) == 0 {
		return fail(fmt.Errorf("%d queue samples and %d echoes: nothing to report", len(standing), len(rtts)))
	}
	return q
}

// cubicFlow starts one Cubic flow from server to client saturating the
// down direction. received counts the bytes the client has read; stop
// closes both ends.
func cubicFlow(ctx context.Context, l *shapedlink.Link) (received *atomic.Int64, stop func(), err error) {
	var ln net.Listener
	if err := l.Client().Do(func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(l.ClientAddr().String(), "0"))
		return err
	}); err != nil {
		return nil, nil, err
	}
	received = new(atomic.Int64)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := conn.Read(buf)
			received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	var conn net.Conn
	if err := l.Server().Do(func() (err error) {
		var capped string
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error { return setSockopts(rc, "cubic", 0, &capped) }}
		conn, err = d.DialContext(ctx, "tcp4", net.JoinHostPort(l.ClientAddr().String(), fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)))
		return err
	}); err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("the Cubic flow: %w", err)
	}
	go saturate(conn)
	return received, func() { conn.Close(); ln.Close() }, nil
}

// standingQueue is each queue sample's wait for the rate in ms: the bytes
// the shaper held beyond what the delay line holds. The samples count the
// delay line too, except on netem with a discipline, where they are the
// discipline's own queue (netem holds the delay line above it).
func standingQueue(samples []shapedlink.QueueSample, backend shapedlink.Backend, down shapedlink.Direction) []float64 {
	var standing []float64
	rate := down.RateMbit * 1e6
	line := down.Delay.Seconds()
	if backend == shapedlink.BackendNetem && down.Queue.Managed() {
		line = 0
	}
	for _, s := range samples {
		standing = append(standing, max(0, (float64(s.Bytes)*8/rate-line)*1000))
	}
	return standing
}
