package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Listener accepts sessions for one arm.
type Listener struct {
	arm     Arm
	opts    Options
	addr    net.Addr
	results chan acceptResult
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func() error
	shared  *refCloser // QUIC: the transport shared by the listener and its sessions

	mu    sync.Mutex
	fatal error

	closeOnce sync.Once
	closeErr  error
}

type acceptResult struct {
	s   *Session
	err error
}

// Listen starts accepting sessions of the given arm on addr ("ip:port"; port
// 0 picks one, see Addr). The listener stops when Close is called or ctx is
// done. For the QUIC arms opts.Certificate must hold the certificate and key.
func Listen(ctx context.Context, arm Arm, addr string, opts Options) (*Listener, error) {
	arm, opts = arm.connections(opts)
	o, err := opts.validate(arm)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &Listener{arm: arm, opts: o, results: make(chan acceptResult, 16), ctx: lctx, cancel: cancel}
	switch arm {
	case ArmTCP:
		err = l.listenTCP(addr)
	default:
		err = l.listenQUIC(addr)
	}
	if err != nil {
		cancel()
		_ = l.closeAll()
		return nil, err
	}
	go func() {
		<-lctx.Done()
		_ = l.Close()
	}()
	return l, nil
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() net.Addr { return l.addr }

// Accept waits for the next complete session: all N channels arrived and
// identified. A *ChannelError about one incoming session (bad header,
// missing channels, failed handshake step) leaves the listener running:
// call Accept again. If the listening socket itself fails, the listener
// closes and Accept returns that error, wrapping net.ErrClosed. After Close,
// or once the listener's context has ended, Accept returns net.ErrClosed.
func (l *Listener) Accept(ctx context.Context) (*Session, error) {
	if l.ctx.Err() != nil {
		return nil, l.closedErr()
	}
	select {
	case r := <-l.results:
		return r.s, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.ctx.Done():
		return nil, l.closedErr()
	}
}

// fail stops the listener because its socket failed; Accept reports err.
func (l *Listener) fail(err error) {
	l.mu.Lock()
	if l.fatal == nil {
		l.fatal = err
	}
	l.mu.Unlock()
	l.cancel()
}

func (l *Listener) closedErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal != nil {
		return fmt.Errorf("%w (%w)", l.fatal, net.ErrClosed)
	}
	return fmt.Errorf("transport: %s listener: %w", l.arm, net.ErrClosed)
}

func (l *Listener) deliver(s *Session, err error) {
	if l.ctx.Err() == nil {
		select {
		case l.results <- acceptResult{s, err}:
			return
		case <-l.ctx.Done():
		}
	}
	if s != nil {
		_ = s.Close()
	}
}

// Close stops accepting. Sessions already returned by Accept stay open;
// sessions not yet accepted are closed.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		l.closeErr = l.closeAll()
		l.wg.Wait()
		for {
			select {
			case r := <-l.results:
				if r.s != nil {
					_ = r.s.Close()
				}
				continue
			default:
			}
			break
		}
	})
	return l.closeErr
}

func (l *Listener) closeAll() error {
	var errs []error
	for _, f := range l.closers {
		if err := f(); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pending collects the channels of one incoming session on the server until
// all have arrived, or its deadline passes.
type pending[T any] struct {
	items   []T
	have    []bool
	n       int
	started time.Time
	timer   *time.Timer
}

type grouper[T any] struct {
	mu       sync.Mutex
	sessions map[sessionID]*pending[T]
}

// add files item as channel h.index of session h.session. It returns the
// complete set when this item was the last one missing. onExpire runs (once)
// with the items collected so far if the session is still incomplete after
// timeout.
func (g *grouper[T]) add(h channelHeader, item T, timeout time.Duration, onExpire func(have []T, missing []int)) (complete []T, started time.Time, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions == nil {
		g.sessions = map[sessionID]*pending[T]{}
	}
	p, ok := g.sessions[h.session]
	if !ok {
		p = &pending[T]{items: make([]T, h.count), have: make([]bool, h.count), started: time.Now()}
		g.sessions[h.session] = p
		id := h.session
		p.timer = time.AfterFunc(timeout, func() {
			g.mu.Lock()
			q, ok := g.sessions[id]
			if ok {
				delete(g.sessions, id)
			}
			g.mu.Unlock()
			if !ok {
				return
			}
			var have []T
			var missing []int
			for i, got := range q.have {
				if got {
					have = append(have, q.items[i])
				} else {
					missing = append(missing, i)
				}
			}
			onExpire(have, missing)
		})
	}
	if len(p.items) != h.count {
		return nil, time.Time{}, fmt.Errorf("header says %d channels but earlier channels of session %016x said %d", h.count, uint64(h.session), len(p.items))
	}
	if p.have[h.index] {
		return nil, time.Time{}, fmt.Errorf("channel %d of session %016x arrived twice", h.index, uint64(h.session))
	}
	p.items[h.index] = item
	p.have[h.index] = true
	p.n++
	if p.n < h.count {
		return nil, time.Time{}, nil
	}
	p.timer.Stop()
	delete(g.sessions, h.session)
	return p.items, p.started, nil
}
