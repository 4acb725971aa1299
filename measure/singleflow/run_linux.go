package singleflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	// A profile may ask for QUIC cross flows.
	_ "github.com/shakenfist/quicbench/shapedlink/quiccross"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// Run measures every flow of c that c.Skip does not leave out, calling
// progress (if not nil) after each run. A flow that fails is returned
// with its Error set; Run's error is for what stops the whole comparison
// (bad configuration, the controller refused, ctx done). A run that ctx
// ended is neither returned nor reported.
func Run(ctx context.Context, c Config, progress func(Result)) ([]Result, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("singleflow: %w", err)
	}
	if c.usesController() {
		ctl, err := quicreno.Load(c.Controller)
		if err != nil {
			return nil, fmt.Errorf("singleflow: flow tcp-%s: %w", quicreno.Name, err)
		}
		defer ctl.Close()
	}
	cert, err := transport.NewCertificate()
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, p := range c.Profiles {
		for _, loss := range c.Losses {
			for r := 1; r <= c.Repeats; r++ {
				for i := range c.Flows {
					// Rotate the order each repeat so no flow always runs first.
					f := c.Flows[(i+r-1)%len(c.Flows)]
					if err := ctx.Err(); err != nil {
						return out, err
					}
					id := Result{Profile: p.String(), Loss: loss, Flow: string(f), Repeat: r}
					if c.Skip != nil && c.Skip(id) {
						continue
					}
					res := runOne(ctx, c, p.WithLoss(loss), f, r, cert)
					if err := ctx.Err(); err != nil {
						return out, err
					}
					res.Profile, res.Loss, res.Flow, res.Repeat = id.Profile, id.Loss, id.Flow, id.Repeat
					out = append(out, res)
					if progress != nil {
						progress(res)
					}
				}
			}
		}
	}
	return out, nil
}

// runOne sends one bulk flow from the server to the client over a fresh
// link.
func runOne(ctx context.Context, c Config, p shapedlink.Profile, f measure.Arm, repeat int, cert transport.Certificate) (res Result) {
	res.Controller = controllerLabel(f, c.Controller)
	fail := func(step string, err error) Result { res.Error = step + ": " + err.Error(); return res }
	link, err := shapedlink.New(ctx, p, c.Link)
	if err != nil {
		return fail("building the link", err)
	}
	defer link.Close()
	defer func() {
		res.Cross = link.Instruments().CrossFlows()
		if err := link.Err(); err != nil && res.Error == "" {
			res.Error = "the link: " + err.Error()
		}
	}()
	rctx, cancel := context.WithTimeout(ctx, c.Duration+30*time.Second)
	defer cancel()

	b, step, err := startBulk(rctx, link, f, cert)
	if err != nil {
		return fail(step, err)
	}
	defer b.close()

	rtt := p.RoundTrip()
	res.FirstRTTCapBytes = int64(p.RateMbit * 1e6 / 8 * (rtt * 9 / 10).Seconds())
	rd, err := receive(rctx, b.client.Channels()[0], c.Duration, c.Warmup, rtt*9/10)
	b.stop.Store(true)
	st := b.server.State()
	if _, ok := f.PinnedCC(); ok {
		st.Arm = transport.ArmTCP // a state file names transport's arm, its controller beside it
	}
	if c.StateDir != "" {
		res.StateFile = stateName(p, f, repeat)
		if err := writeState(filepath.Join(c.StateDir, res.StateFile), st); err != nil {
			return fail("saving the sender's state", err)
		}
	}
	if err != nil {
		return fail("receiving", err)
	}
	res.GoodputMbit = float64(rd.windowBytes*8) / rd.window.Seconds() / 1e6
	res.FirstRTTBytes = rd.firstBytes
	if err := readSender(&res, f, st); err != nil {
		return fail("reading the sender's state", err)
	}
	return res
}

// bulk is a server session writing to its first channel without pause,
// until stop is set, and the client session reading it.
type bulk struct {
	ln             measure.ArmListener
	client, server measure.ArmSession
	stop           *atomic.Bool
}

// close closes the server's session, the client's and the listener.
func (b bulk) close() {
	b.server.Close()
	b.client.Close()
	b.ln.Close()
}

// startBulk listens on the link's server, dials it from its client and
// starts the server writing. On error it names the step that failed and
// leaves nothing open.
func startBulk(ctx context.Context, link *shapedlink.Link, f measure.Arm, cert transport.Certificate) (b bulk, step string, err error) {
	opts := transport.Options{Channels: 1, Certificate: cert,
		TCPInfoInterval: 5 * time.Millisecond, MetricsInterval: 2 * time.Millisecond}
	sopts, copts := opts, opts
	sopts.Listen, sopts.ListenPacket = link.Server().Listen, link.Server().ListenPacket
	copts.DialContext, copts.ListenPacket = link.Client().DialContext, link.Client().ListenPacket
	ln, err := f.Listen(ctx, net.JoinHostPort(link.ServerAddr().String(), "0"), sopts)
	if err != nil {
		return b, "listening", err
	}

	type accepted struct {
		s   measure.ArmSession
		err error
	}
	acc := make(chan accepted, 1)
	stop := new(atomic.Bool)
	go func() {
		s, err := ln.Accept(ctx)
		acc <- accepted{s, err}
		if err != nil {
			return
		}
		buf := make([]byte, 64<<10)
		ch := s.Channels()[0]
		for !stop.Load() {
			if _, err := ch.Write(buf); err != nil {
				return
			}
		}
	}()
	cs, err := f.Dial(ctx, ln.Addr().String(), copts)
	if err != nil {
		ln.Close()
		return b, "dialling", err
	}
	select {
	case a := <-acc:
		if a.err != nil {
			cs.Close()
			ln.Close()
			return b, "accepting", a.err
		}
		return bulk{ln: ln, client: cs, server: a.s, stop: stop}, "", nil
	case <-ctx.Done():
		cs.Close()
		ln.Close()
		return b, "accepting", ctx.Err()
	}
}

// readSender sets res's backoffs and initial window from the sender's
// state: its one TCP connection for an arm with a pinned controller,
// else its one QUIC connection.
func readSender(res *Result, f measure.Arm, st transport.State) error {
	if cc, ok := f.PinnedCC(); ok {
		if len(st.TCP) != 1 {
			return fmt.Errorf("%d TCP connections, want 1", len(st.TCP))
		}
		tc := st.TCP[0]
		if tc.Info.Algorithm != cc {
			return fmt.Errorf("the socket ran %q, not %q", tc.Info.Algorithm, cc)
		}
		res.Backoffs = tcpBackoffs(tc.Series)
		if len(tc.Series) > 0 && tc.Series[0].MSS > 0 {
			res.InitialWindow = float64(tc.Series[0].CwndSegments)
		}
		return nil
	}
	if len(st.QUIC) != 1 {
		return fmt.Errorf("%d QUIC connections, want 1", len(st.QUIC))
	}
	qc := st.QUIC[0]
	res.Backoffs = quicBackoffs(qc.Metrics, qc.CongestionStates)
	if len(qc.Metrics) > 0 && qc.ConfiguredPacketSize > 0 {
		res.InitialWindow = float64(qc.Metrics[0].CongestionWindow) / float64(qc.ConfiguredPacketSize)
	}
	return nil
}

func controllerLabel(f measure.Arm, p quicreno.Params) string {
	cc, ok := f.PinnedCC()
	switch {
	case !ok:
		return transport.QUICCongestionControl
	case cc == quicreno.Name:
		return quicreno.Name + " (" + p.String() + ")"
	}
	return cc
}

type received struct {
	firstBytes  int64
	windowBytes int64
	window      time.Duration
}

// receive reads ch until d has passed, and counts the bytes of the first
// flight (read within first of the first byte) and those after warm-up.
func receive(ctx context.Context, ch io.Reader, d, warmup, first time.Duration) (received, error) {
	var r received
	var total, firstBytes atomic.Int64
	var t0 time.Time
	errc := make(chan error, 1)
	firstDone := make(chan struct{})
	go func() {
		buf := make([]byte, 256<<10)
		var firstEnd time.Time
		for {
			n, err := ch.Read(buf)
			now := time.Now()
			if n > 0 {
				if firstEnd.IsZero() {
					firstEnd = now.Add(first)
					close(firstDone)
				}
				if now.Before(firstEnd) {
					firstBytes.Add(int64(n))
				}
				total.Add(int64(n))
			}
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	start := time.Now()
	select {
	case <-firstDone:
	case err := <-errc:
		return r, fmt.Errorf("the stream ended before any data: %w", err)
	case <-ctx.Done():
		return r, ctx.Err()
	}
	wait := func(until time.Time) error {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case err := <-errc:
			return fmt.Errorf("the stream ended early: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := wait(start.Add(warmup)); err != nil {
		return r, err
	}
	b0 := total.Load()
	t0 = time.Now()
	if err := wait(start.Add(d)); err != nil {
		return r, err
	}
	r.windowBytes = total.Load() - b0
	r.firstBytes = firstBytes.Load()
	r.window = time.Since(t0)
	if r.window <= 0 {
		return r, errors.New("empty measurement window")
	}
	return r, nil
}

func stateName(p shapedlink.Profile, f measure.Arm, repeat int) string {
	return strings.NewReplacer(":", "-", "/", "-", " ", "").Replace(fmt.Sprintf("%s_%g_%s_r%d.json", p.String(), p.LossPct, f, repeat))
}

func writeState(path string, st transport.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
