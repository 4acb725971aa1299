package fallback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// The server and client are the program re-executed inside the server and
// client namespaces, as measure/bench does, so the client's
// timing is not disturbed by the server's work in the same process. The
// server listens on rig.ServerPort, QUIC on UDP and TCP, same number.

// roles names this experiment's role variables ("server" or "client", and
// the path of the roleSpec JSON).
var roles = rig.RoleEnv{Role: "QUICBENCH_FALLBACK_ROLE", Spec: "QUICBENCH_FALLBACK_SPEC"}

// roleSpec is what a server or client process is told to do.
type roleSpec struct {
	rig.RoleBase
	Arm      measure.Arm   `json:"arm"`
	Connects int           `json:"connects"`
	GiveUp   time.Duration `json:"give_up_ns"`
	Gap      time.Duration `json:"gap_ns"`
}

// roleResult is what a role process writes.
type roleResult struct {
	Role     string                `json:"role"`
	Err      string                `json:"error,omitempty"`
	Connects []Connect             `json:"connects,omitempty"`
	Sessions map[transport.Arm]int `json:"sessions,omitempty"`
	Errors   []string              `json:"errors,omitempty"`
}

// Prepare gets the privilege to build links: as root it does nothing; as
// an ordinary user it re-executes the program in a user and network
// namespace of its own and exits with its status (shapedlink.Reexec).
func Prepare() error { return shapedlink.Reexec() }

// MaybeRunRole must be called first thing in main (and in TestMain) of a
// program that calls Run: a job's server and client are that program
// started again inside their namespaces, and in such a process
// MaybeRunRole does the role's job and exits. Otherwise it returns at
// once.
func MaybeRunRole() {
	rig.ServeRole(roles, map[string]func(context.Context, roleSpec, *slog.Logger) (roleResult, error){
		rig.RoleServer: runServer,
		rig.RoleClient: runClient,
	}, func(role string, res *roleResult, err error, log *slog.Logger) {
		res.Role = role
		if err != nil {
			res.Err = err.Error()
			log.Error("failed", "err", err)
		}
	})
}

// runServer listens for both arms and counts the sessions it accepts until
// it is told to stop (SIGTERM). Each session is held until the client
// closes it.
func runServer(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
	res := roleResult{Sessions: map[transport.Arm]int{}}
	ln, err := transport.ListenFallback(ctx, spec.Addr, spec.Transport)
	if err != nil {
		return res, fmt.Errorf("listen on %s: %w", spec.Addr, err)
	}
	defer ln.Close()
	rig.SignalReady(ln.QUICAddr(), ln.TCPAddr())
	log.Info("listening", "quic", ln.QUICAddr().String(), "tcp", ln.TCPAddr().String())
	for {
		s, err := ln.Accept(ctx)
		if ctx.Err() != nil {
			break
		}
		var ce *transport.ChannelError
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
			log.Warn("accept", "err", err)
			if errors.As(err, &ce) {
				continue // one bad session; the listener goes on
			}
			return res, err
		}
		res.Sessions[s.Arm()]++
		log.Info("session", "arm", s.Arm())
		go func() {
			// Echo the client's probe byte, then hold the session
			// until the client closes it.
			defer s.Close()
			ch := s.Channel(0)
			_ = ch.SetReadDeadline(time.Now().Add(time.Minute))
			var b [64]byte
			if _, err := io.ReadFull(ch, b[:1]); err != nil {
				return
			}
			if _, err := ch.Write(b[:1]); err != nil {
				return
			}
			for {
				if _, err := ch.Read(b[:]); err != nil {
					return
				}
			}
		}()
	}
	return res, nil
}

// runClient makes spec.Connects connects one after another, timing each,
// and closes each session before the next.
func runClient(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
	res := roleResult{}
	quicAddr, tcpAddr := spec.Addr, spec.Addr // the same port number for both
	for i := range spec.Connects {
		if i > 0 {
			select {
			case <-time.After(spec.Gap):
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		c := Connect{Index: i, Started: time.Now()}
		var s *transport.Session
		var err error
		if spec.Arm == armTCP {
			s, err = transport.Dial(dctx, transport.ArmTCP, tcpAddr, spec.Transport)
			c.Elapsed = time.Since(c.Started)
		} else {
			var fr transport.FallbackResult
			s, fr, err = transport.DialFallback(dctx, quicAddr, tcpAddr, spec.Transport, spec.GiveUp)
			c.Elapsed = time.Since(c.Started)
			c.Fallback = &fr
		}
		cancel()
		if err != nil {
			c.Err = err.Error()
			log.Warn("connect failed", "index", i, "err", err)
		} else {
			c.Arm, c.SessionConnect = s.Arm(), s.ConnectTime()
			// One byte there and back on channel 0, outside the
			// connect time: proof the session carries data, and the
			// server has the whole session before it is closed.
			t0 := time.Now()
			if err := probe(s.Channel(0)); err != nil {
				c.Err = "session connected but the probe failed: " + err.Error()
				log.Warn("probe failed", "index", i, "err", err)
			} else {
				c.Probe = time.Since(t0)
			}
			_ = s.Close()
		}
		if c.Fallback != nil {
			log.Info("connect", "index", i, "elapsed", c.Elapsed, "fallback", *c.Fallback)
		} else {
			log.Info("connect", "index", i, "elapsed", c.Elapsed, "arm", c.Arm)
		}
		res.Connects = append(res.Connects, c)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	return res, nil
}

// probe sends one byte on ch and waits for its echo.
func probe(ch transport.Channel) error {
	_ = ch.SetDeadline(time.Now().Add(10 * time.Second))
	defer ch.SetDeadline(time.Time{})
	if _, err := ch.Write([]byte{'p'}); err != nil {
		return err
	}
	var b [1]byte
	if _, err := io.ReadFull(ch, b[:]); err != nil {
		return err
	}
	if b[0] != 'p' {
		return fmt.Errorf("echo %q, want %q", b[0], 'p')
	}
	return nil
}

// runJob makes one profile and arm's run on a fresh link (loop.One on
// rig.Local) and writes its Record; a failed run is recorded with Failed
// set. The error is an interruption or a failure to record.
func runJob(ctx context.Context, cfg Config, j job, log *slog.Logger) (Record, error) {
	aj := &armJob{cfg: cfg, j: j, log: log}
	_, err := loop.One(ctx, rig.Local{Env: roles, Link: cfg.Link, Log: log}, aj, log)
	return aj.rec, err
}

// armJob is one profile and arm, a loop.Job: the UDP block for the
// blocked arm, and the Record the run fills in.
type armJob struct {
	cfg   Config
	j     job
	log   *slog.Logger
	block *shapedlink.Filter
	rec   Record
}

func (a *armJob) Start() (string, shapedlink.Profile, results.Run) {
	c, p := a.cfg, a.j.profile
	a.rec = Record{Schema: schemaVersion, Profile: p.String(), Arm: a.j.arm, Connects: c.Connects,
		Channels: c.Channels, GiveUp: c.GiveUp, Gap: c.Gap, Started: time.Now()}
	cell := results.Cell{Profile: p.WithLoss(0).String(), RTTms: float64(p.RTT) / 1e6, RateMbit: p.RateMbit,
		LossPct: p.LossPct, CC: "reno"}
	return filepath.Join(c.dir(p), string(a.j.arm)), p, results.NewRun(cell, string(a.j.arm), false, 0, 0, 0)
}

// Roles blocks UDP leaving the client namespace for the blocked arm; the
// server runs until stopped.
func (a *armJob) Roles(_ context.Context, st rig.Stage, _ string) (loop.Roles, error) {
	c := a.cfg
	if a.j.arm == armFallbackBlocked {
		l := rig.LinkOf(st)
		if l == nil {
			return loop.Roles{}, errors.New("blocking UDP needs a link built on this machine")
		}
		var err error
		if a.block, err = l.Control().BlockUDP(shapedlink.ClientEnd); err != nil {
			return loop.Roles{}, fmt.Errorf("blocking UDP: %w", err)
		}
	}
	o := transport.Options{Channels: c.Channels, CongestionControl: "reno"}
	perConnect := c.GiveUp + c.Gap + 30*time.Second
	return loop.Roles{
		Server: o, Client: o,
		Within: time.Duration(c.Connects)*perConnect + time.Minute,
		ServerSpec: func(b rig.RoleBase) any {
			return roleSpec{RoleBase: b, Arm: a.j.arm}
		},
		ClientSpec: func(b rig.RoleBase) any {
			return roleSpec{RoleBase: b, Arm: a.j.arm, Connects: c.Connects, GiveUp: c.GiveUp, Gap: c.Gap}
		},
	}, nil
}

// Drive runs the client to its end and reads the UDP drop counter.
func (a *armJob) Drive(ctx context.Context, st rig.Stage, spec any, _ *results.Run) (exit, err error) {
	cli, err := st.StartClient(ctx, spec)
	if err != nil {
		return nil, err
	}
	exit = cli.Wait()
	if a.block != nil {
		d, err := a.block.Dropped()
		if err != nil {
			return exit, fmt.Errorf("reading the UDP drop counter: %w", err)
		}
		a.rec.UDPBlocked = &Dropped{Filter: a.block.String(), Packets: d.Packets, Bytes: d.Bytes}
	}
	return exit, nil
}

// Finish reads the client's connects and the server's sessions into the
// Record.
func (a *armJob) Finish(_ *results.Run, e loop.Ended) error {
	var cres, sres roleResult
	if err := results.ReadJSON(e.Client, &cres); err != nil {
		return fmt.Errorf("client wrote no result (%v; exit: %v); see %s", err, e.ClientExit, e.ClientLog)
	}
	a.rec.Results = cres.Connects
	if err := results.ReadJSON(e.Server, &sres); err == nil {
		a.rec.ServerSessions, a.rec.ServerErrors = sres.Sessions, sres.Errors
	} else {
		a.log.Warn("server wrote no result", "err", err)
	}
	if cres.Err != "" {
		return fmt.Errorf("client: %s (see client.log)", cres.Err)
	}
	if len(a.rec.Results) != a.cfg.Connects {
		return fmt.Errorf("client recorded %d connects of %d", len(a.rec.Results), a.cfg.Connects)
	}
	return nil
}

// Extra writes the Record as <profile dir>/<arm>.json, with the link as
// it was built (what the link reports at its end is in run.json only).
func (a *armJob) Extra(run results.Run) error {
	a.rec.Failed = run.Failed
	a.rec.Link, a.rec.Host = run.Link, run.Host
	a.rec.Link.Shaper, a.rec.Link.ScheduleStart, a.rec.Link.Changes = nil, time.Time{}, nil
	return results.WriteJSON(a.cfg.recordPath(a.j), a.rec)
}
