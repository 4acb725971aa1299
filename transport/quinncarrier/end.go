package quinncarrier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// End is one running end of the carrier, started by StartServer or
// StartClient.
type End struct {
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	stderr *tail
	ready  Ready
	stats  string
	once   sync.Once
	stop   error
	ended  EndStats
}

// Ready is what the end printed when it was ready.
func (e *End) Ready() Ready { return e.ready }

// Stop asks the end to stop (SIGTERM; SIGKILL after a few seconds), waits
// for it and reads back what it recorded. Later calls return the first's
// result.
func (e *End) Stop() (EndStats, error) {
	if e == nil {
		return EndStats{}, nil
	}
	e.once.Do(func() {
		err := e.terminate()
		b, rerr := os.ReadFile(e.stats)
		if rerr == nil {
			rerr = json.Unmarshal(b, &e.ended)
		}
		if rerr != nil {
			rerr = fmt.Errorf("quinncarrier: reading %s: %w", filepath.Base(e.stats), rerr)
		}
		e.stop = errors.Join(err, rerr)
	})
	return e.ended, e.stop
}

// startEnd starts bin with args (at s, or here) and waits for its ready
// line.
func startEnd(ctx context.Context, s starter, bin string, args []string) (*End, error) {
	cmd := exec.Command(bin, args...)
	e := &End{cmd: cmd, done: make(chan struct{}), stderr: &tail{max: 4096}}
	cmd.Stderr = e.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if ns, ok := s.(nsStarter); ok {
		err = ns.start(cmd, e.done)
	} else if s == nil {
		err = startHere(cmd, e.done)
	} else {
		err = s.Start(cmd)
	}
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	lines := make(chan Ready, 1)
	bad := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		first := true
		for sc.Scan() {
			if !first {
				continue
			}
			first = false
			var r Ready
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				bad <- fmt.Errorf("its first line is not its ready line: %q: %w", sc.Text(), err)
				continue
			}
			lines <- r
		}
		_, _ = io.Copy(io.Discard, out)
		e.err = cmd.Wait()
		close(e.done)
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case r := <-lines:
		e.ready = r
		return e, nil
	case err = <-bad:
	case <-e.done:
		err = fmt.Errorf("it exited before it was ready (%v): %s", e.err, e.stderr.String())
	case <-timer.C:
		err = fmt.Errorf("not ready within %v: %s", readyTimeout, e.stderr.String())
	case <-ctx.Done():
		err = ctx.Err()
	}
	e.kill()
	return nil, err
}

func (e *End) terminate() error {
	if e == nil {
		return nil
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(stopTimeout):
		e.kill()
		return fmt.Errorf("quinncarrier: %s did not stop within %v of SIGTERM, and was killed", e.cmd.Args[1], stopTimeout)
	}
	if e.err != nil {
		return fmt.Errorf("quinncarrier: the %s end: %w: %s", e.cmd.Args[1], e.err, e.stderr.String())
	}
	return nil
}

func (e *End) kill() {
	if e == nil {
		return
	}
	_ = e.cmd.Process.Kill()
	<-e.done
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}
