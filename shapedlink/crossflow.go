package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Cross is one group of bulk flows beside the session in a direction, as
// the profile's cross option gives it: Count flows of Kind, "quic" or a
// kernel TCP congestion control. TCP reports whether they are TCP; String
// is the option's form, "2xcubic".
type Cross = linkspec.Cross

// CrossBin is the width of a cross flow's goodput bins (CrossReport.Bins).
const CrossBin = 100 * time.Millisecond

// A CrossRunner carries cross flows of a kind the link does not carry
// itself. The link carries every TCP kind; package shapedlink/quiccross
// registers the runner for "quic" (RegisterCrossRunner).
type CrossRunner interface {
	// Receive accepts flows in ns at addr (port 0: any) until ctx ends,
	// calling count with every read's bytes, and returns where it listens.
	Receive(ctx context.Context, ns *Namespace, addr netip.AddrPort, count func(n int)) (netip.AddrPort, error)
	// Send opens one flow from ns to to and sends as fast as the flow
	// allows until ctx ends.
	Send(ctx context.Context, ns *Namespace, to netip.AddrPort) (CrossSender, error)
}

// A CrossSender is one running cross flow's sending end.
type CrossSender interface {
	// Stats is what the flow has sent so far.
	Stats() CrossSent
	// Wait returns once the flow has stopped: nil when its context ended,
	// else why it stopped.
	Wait() error
}

// CrossSent is a cross flow's sender's account: its congestion control
// as the socket or stack states it, packets sent and packets sent again
// (TCP's tcpi_segs_out and tcpi_total_retrans; QUIC's packets sent and
// declared lost).
type CrossSent struct {
	CC          string
	SentPackets uint64
	Retransmits uint64
}

var (
	crossMu      sync.Mutex
	crossRunners = map[string]CrossRunner{}
)

// RegisterCrossRunner makes r carry the cross flows of kind (only
// "quic": the link carries TCP itself). It panics on another kind or a
// second registration, as a programming error.
func RegisterCrossRunner(kind string, r CrossRunner) {
	crossMu.Lock()
	defer crossMu.Unlock()
	if kind != linkspec.CrossQUIC || crossRunners[kind] != nil {
		panic(fmt.Sprintf("shapedlink: RegisterCrossRunner(%q) twice or for a TCP kind", kind))
	}
	crossRunners[kind] = r
}

func crossRunner(c Cross) (CrossRunner, error) {
	if c.TCP() {
		return tcpCross{cc: c.Kind}, nil
	}
	crossMu.Lock()
	defer crossMu.Unlock()
	if r := crossRunners[c.Kind]; r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("shapedlink: cross=%s needs a QUIC runner, and none is registered: import github.com/shakenfist/quicbench/shapedlink/quiccross, which registers quic-go's", c)
}

// CrossReport is what one cross flow carried: its direction, kind and
// index among the direction's flows; its congestion control read back;
// when it started (Bins count from then) and the bytes delivered to its
// receiver in each CrossBin; its total, its sender's packets and
// retransmissions; and the error that stopped it early, if one did.
type CrossReport struct {
	Dir         string    `json:"dir"`
	Kind        string    `json:"kind"`
	Index       int       `json:"index"`
	CC          string    `json:"cc,omitempty"`
	Started     time.Time `json:"started"`
	BinMs       int       `json:"bin_ms"`
	Bins        []int64   `json:"bins"`
	Bytes       int64     `json:"bytes"`
	SentPackets uint64    `json:"sent_packets"`
	Retransmits uint64    `json:"retransmits"`
	Err         string    `json:"err,omitempty"`
}

// GoodputMbit is the flow's delivered rate over [from, to) in Mbit/s,
// counting the bins wholly inside it; 0 when none is.
func (r CrossReport) GoodputMbit(from, to time.Time) float64 {
	bin := time.Duration(r.BinMs) * time.Millisecond
	if bin <= 0 {
		return 0
	}
	var bytes int64
	var n int
	for i, b := range r.Bins {
		start := r.Started.Add(time.Duration(i) * bin)
		if !start.Before(from) && !start.Add(bin).After(to) {
			bytes += b
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(bytes) * 8 / (float64(n) * bin.Seconds()) / 1e6
}

// RetransmitPct is the share of the sender's packets sent again, in
// percent; 0 before it has sent any.
func (r CrossReport) RetransmitPct() float64 {
	if r.SentPackets == 0 {
		return 0
	}
	return 100 * float64(r.Retransmits) / float64(r.SentPackets)
}

// crossFlows are a link's running cross flows.
type crossFlows struct {
	cancel context.CancelFunc
	flows  []*crossFlow
}

type crossFlow struct {
	dir   Dir
	kind  string
	index int

	mu      sync.Mutex
	started time.Time
	bins    []int64
	bytes   int64
	sender  CrossSender
	last    CrossSent
	err     error
	done    chan struct{}
}

// count adds n delivered bytes to the bin of now.
func (f *crossFlow) count(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started.IsZero() {
		return
	}
	i := int(time.Since(f.started) / CrossBin)
	for len(f.bins) <= i {
		f.bins = append(f.bins, 0)
	}
	f.bins[i] += int64(n)
	f.bytes += int64(n)
}

// startCross starts every cross flow the link's directions ask for, each
// with its own receiver, from the sending end to the receiving one's
// address. On error the flows already started are stopped.
func (l *Link) startCross(ctx context.Context) error {
	n := 0
	for _, d := range l.dirs {
		n += linkspec.CrossFlows(d.Cross)
	}
	if n == 0 {
		return nil
	}
	runCtx, cancel := context.WithCancel(context.Background())
	cf := &crossFlows{cancel: cancel}
	l.cross = cf
	for di, d := range l.dirs {
		dir := Dir(di)
		from, to, at := l.server, l.client, clientAddr
		if dir == Up {
			from, to, at = l.client, l.server, serverAddr
		}
		for _, c := range d.Cross {
			r, err := crossRunner(c)
			if err != nil {
				return err
			}
			for i := 0; i < c.Count; i++ {
				f := &crossFlow{dir: dir, kind: c.Kind, index: len(cf.flows), done: make(chan struct{})}
				if err := f.start(ctx, runCtx, r, from, to, netip.AddrPortFrom(at, 0)); err != nil {
					return fmt.Errorf("shapedlink: starting cross flow %d (%s, %s): %w", f.index, c.Kind, dir, err)
				}
				cf.flows = append(cf.flows, f)
				l.log.Info("shapedlink: cross flow started", "dir", dir, "kind", c.Kind, "index", f.index)
			}
		}
	}
	return nil
}

func (f *crossFlow) start(ctx, runCtx context.Context, r CrossRunner, from, to *Namespace, at netip.AddrPort) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ap, err := r.Receive(runCtx, to, at, f.count)
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	f.mu.Lock()
	f.started = time.Now()
	f.mu.Unlock()
	s, err := r.Send(runCtx, from, ap)
	if err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	f.mu.Lock()
	f.sender = s
	f.mu.Unlock()
	go func() {
		err := s.Wait()
		f.mu.Lock()
		f.last = s.Stats()
		if err != nil && runCtx.Err() == nil {
			f.err = err
		}
		f.mu.Unlock()
		close(f.done)
	}()
	return nil
}

// err is why a cross flow stopped before the link closed, or nil.
func (cf *crossFlows) err() error {
	if cf == nil {
		return nil
	}
	var errs []error
	for _, f := range cf.flows {
		f.mu.Lock()
		if f.err != nil {
			errs = append(errs, fmt.Errorf("shapedlink: cross flow %d (%s, %s) stopped: %w", f.index, f.kind, f.dir, f.err))
		}
		f.mu.Unlock()
	}
	return errors.Join(errs...)
}

// stop ends every flow and waits up to two seconds for them.
func (cf *crossFlows) stop() {
	if cf == nil {
		return
	}
	cf.cancel()
	deadline := time.After(2 * time.Second)
	for _, f := range cf.flows {
		select {
		case <-f.done:
		case <-deadline:
			return
		}
	}
}

// reports is each flow's account so far.
func (cf *crossFlows) reports() []CrossReport {
	if cf == nil {
		return nil
	}
	out := make([]CrossReport, 0, len(cf.flows))
	for _, f := range cf.flows {
		select {
		case <-f.done:
		default:
			st := f.sender.Stats()
			f.mu.Lock()
			f.last = st
			f.mu.Unlock()
		}
		f.mu.Lock()
		r := CrossReport{Dir: f.dir.String(), Kind: f.kind, Index: f.index, CC: f.last.CC, Started: f.started,
			BinMs: int(CrossBin / time.Millisecond), Bins: append([]int64(nil), f.bins...), Bytes: f.bytes,
			SentPackets: f.last.SentPackets, Retransmits: f.last.Retransmits}
		if f.err != nil {
			r.Err = f.err.Error()
		}
		f.mu.Unlock()
		out = append(out, r)
	}
	return out
}
