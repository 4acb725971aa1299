package spicelike

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// chanState is what one channel's goroutines report. The first error per
// channel is kept: later ones are usually consequences of it.
type chanState struct {
	ch   Channel
	mu   sync.Mutex
	err  *ChannelError
	shut bool // set when the run has collected this state; later reports are dropped
	// suppress is set while errors are expected (the run was cancelled or
	// timed out) and must not be reported.
	suppress *atomic.Bool
}

func (s *chanState) fail(phase string, err error) {
	if s.suppress.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut || s.err != nil {
		return
	}
	s.err = &ChannelError{Channel: s.ch.Name, Role: s.ch.Role, Phase: phase, Err: err.Error()}
}

func (s *chanState) collect() *ChannelError {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shut = true
	return s.err
}

func asReadWriters[C io.ReadWriter](chans []C) []io.ReadWriter {
	out := make([]io.ReadWriter, len(chans))
	for i, ch := range chans {
		if any(ch) != nil {
			out[i] = ch
		}
	}
	return out
}

func checkArgs(cfg Config, chans []io.ReadWriter) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(chans) != len(cfg.Channels) {
		return fmt.Errorf("spicelike: %d channels given for a config of %d (%v): pass one io.ReadWriter per Config.Channels entry, in the same order",
			len(chans), len(cfg.Channels), cfg.Channels)
	}
	for i, ch := range chans {
		if ch == nil {
			return fmt.Errorf("spicelike: channel %d (%s) is nil", i, cfg.Channels[i].Name)
		}
	}
	return nil
}

// waitGroupOrStuck waits for wg. Once giveUp is closed it waits at most
// grace more, then reports which goroutines have not finished.
func waitGroupOrStuck(wg *sync.WaitGroup, giveUp <-chan struct{}, grace time.Duration) bool {
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
		return true
	case <-giveUp:
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-all:
		return true
	case <-t.C:
		return false
	}
}

// onCancel arranges for every channel to be interrupted when ctx ends, and
// records that it happened.
func onCancel(ctx context.Context, chans []io.ReadWriter, flag *atomic.Bool, then func()) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		flag.Store(true)
		for _, ch := range chans {
			interruptBoth(ch)
		}
		then()
	})
}
