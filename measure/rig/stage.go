package rig

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Stage is one run's two ends, open: where its server and client run.
// Local's is a fresh link on this machine; the two-host daemon's is the
// path to another host.
type Stage interface {
	// StartServer starts the server, told spec(base) with o as the
	// server's transport options, and waits until it listens; within
	// bounds the run. It returns the client's base: the address to dial,
	// where its result goes, and the certificate to trust (in its
	// Transport).
	StartServer(ctx context.Context, o transport.Options, within time.Duration, spec func(RoleBase) any) (RoleBase, error)
	// StartClient starts the client, told spec, with extra as its
	// descriptors 3, 4, ... (close your copies after StartClient).
	StartClient(ctx context.Context, spec any, extra ...*os.File) (*exec.Cmd, error)
	// EndServer gives the server linger to end once the client has (0:
	// none), stops it if it has not, and leaves its result and log in the run's
	// directory. It reports whether the server ended by itself; the error
	// says why the run's ends cannot be trusted (a broken link, a lost
	// session).
	EndServer(ctx context.Context, linger time.Duration) (bool, error)
	// Close takes the ends down, recording in run what they can say only
	// at the end.
	Close(run *results.Run)
}

// Local runs each run's two ends on a fresh link on this machine, as env's
// roles in the link's namespaces.
type Local struct {
	Env  RoleEnv
	Link shapedlink.Options
	Log  *slog.Logger
}

// Ready reports nothing: a link is built per run.
func (Local) Ready(context.Context) error { return nil }

// Close does nothing: each run's link goes with its Stage.
func (Local) Close() {}

// Open builds a link of profile p for the run whose files go to dir, and
// records the link and the host's state in run.
func (l Local) Open(ctx context.Context, dir string, p shapedlink.Profile, run *results.Run) (Stage, error) {
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	r, err := newRig(ctx, l.Env, dir, p, l.Link)
	if err != nil {
		return nil, err
	}
	run.Link = r.LinkRecord()
	if run.Host, err = r.HostRecord(&run.Link); err != nil {
		log.Warn("host state", "err", err)
	}
	return &localStage{rig: r, log: log}, nil
}

// LinkOf is the link under st when st is Local's, else nil.
func LinkOf(st Stage) *shapedlink.Link {
	if ls, ok := st.(*localStage); ok {
		return ls.rig.Link
	}
	return nil
}

// ServerExit delivers the exit status of the server under st, once it
// has exited, when st is Local's and its server started; else it is nil,
// which never delivers. A job whose server runs until stopped watches it
// to end the client when the server dies first.
func ServerExit(st Stage) <-chan error {
	ls, ok := st.(*localStage)
	if !ok || ls.rig.srv == nil {
		return nil
	}
	exit := make(chan error, 1)
	go func() {
		<-ls.rig.srvDone
		exit <- ls.rig.srvErr
	}()
	return exit
}

// localStage is Local's Stage: a rig.
type localStage struct {
	rig *rig
	log *slog.Logger
}

func (s *localStage) StartServer(ctx context.Context, o transport.Options, within time.Duration, spec func(RoleBase) any) (RoleBase, error) {
	sbase, cbase, err := s.rig.RoleBases(o, time.Now().Add(within))
	if err != nil {
		return cbase, err
	}
	return cbase, s.rig.StartServer(ctx, spec(sbase))
}

func (s *localStage) StartClient(ctx context.Context, spec any, extra ...*os.File) (*exec.Cmd, error) {
	return s.rig.StartClient(ctx, spec, extra...)
}

// EndServer gives the server linger to end by itself, then stops it; with
// linger 0, a server that runs until stopped, it stops it at once unwarned.
func (s *localStage) EndServer(ctx context.Context, linger time.Duration) (bool, error) {
	ended := s.endedWithin(ctx, linger)
	if ended {
		if err := s.rig.srvErr; err != nil {
			s.log.Warn("server exited with an error", "err", err, "log", s.rig.LogPath(RoleServer))
		}
	}
	return ended, s.rig.Link.Err()
}

// endedWithin reports whether the server ends by itself within linger,
// stopping it if it has not.
func (s *localStage) endedWithin(ctx context.Context, linger time.Duration) bool {
	select {
	case <-s.rig.srvDone:
		return true
	default:
	}
	if linger == 0 {
		s.rig.StopServer()
		return false
	}
	select {
	case <-s.rig.srvDone:
		return true
	case <-time.After(linger):
		s.log.Warn("server still running after the client ended; stopping it", "after", linger)
		s.rig.StopServer()
	case <-ctx.Done():
	}
	return false
}

// Close reads what the link can say only at the end (the schedule's start
// and the changes it applied, the cross flows' accounts, the emulator's
// own counters, with a warning when they say it may have distorted the
// run) and takes it down.
func (s *localStage) Close(run *results.Run) {
	defer s.rig.Close()
	s.rig.StopServer()
	in := s.rig.Link.Instruments()
	if start := in.ScheduleStart(); !start.IsZero() {
		run.Link.ScheduleStart = start
		var err error
		if run.Link.Changes, err = in.AppliedChanges(); err != nil {
			s.log.Warn("the link's schedule", "err", err)
		}
	}
	run.Link.Cross = in.CrossFlows()
	if sh, ok := in.ShaperStats(); ok {
		run.Link.Shaper = &sh
		if why := sh.Distorted(results.ShaperLateLimit); why != "" {
			s.log.Warn("the emulator may have distorted this run", "why", why)
		}
	}
}
