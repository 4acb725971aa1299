package loop

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Ends is where each run's two ends run: rig.Local on a link built on
// this machine, or the two-host daemon's client over the path to it.
type Ends interface {
	// Ready checks, before any run, that the ends can be used.
	Ready(ctx context.Context) error
	// Open readies the ends of one run whose files go to dir, over a
	// link of profile p where one is built, and records in run what it
	// knows of the path.
	Open(ctx context.Context, dir string, p shapedlink.Profile, run *results.Run) (rig.Stage, error)
	// Close releases what Ready took.
	Close()
}

// Job is one planned run of an experiment: what its two roles are told,
// what runs beside the client, and the experiment's part of the record.
type Job interface {
	// Start is the run's directory, the link profile it runs over and
	// its record as it starts (results.NewRun).
	Start() (dir string, p shapedlink.Profile, run results.Run)
	// Roles says what the two roles are told, once the ends are open.
	Roles(ctx context.Context, st rig.Stage, dir string) (Roles, error)
	// Drive starts the client, told spec (st.StartClient), does what the
	// run does beside it, and waits for it: exit is the client's exit
	// status, err why the run could not be driven.
	Drive(ctx context.Context, st rig.Stage, spec any, run *results.Run) (exit, err error)
	// Finish reads the two ends' results and puts them into run; the
	// error is why the run failed.
	Finish(run *results.Run, e Ended) error
	// Extra writes the experiment's own records of the finished run
	// beside run.json, or does nothing.
	Extra(run results.Run) error
}

// Roles is what a run's two roles are told.
type Roles struct {
	// Server and Client are each end's transport options; the Stage
	// gives the client the certificate it trusts.
	Server, Client transport.Options
	// Within bounds the roles' processes.
	Within time.Duration
	// Linger is how long the server may run on after the client ends; 0
	// for a server that runs until stopped, which is stopped at once.
	Linger time.Duration
	// ServerSpec and ClientSpec are the roles' specs, given their bases.
	ServerSpec, ClientSpec func(rig.RoleBase) any
}

// Ended is where the two ends left their results once both have ended.
type Ended struct {
	// Server and Client are the paths of their results; ClientLog the
	// client's log.
	Server, Client, ClientLog string
	// ClientExit is the client's exit status.
	ClientExit error
	// ServerEnded reports whether the server ended by itself.
	ServerEnded bool
}

// One makes job's run on ends and records it (results.RecordRun): open
// the ends, start the server, drive the client, end the server, record,
// close. A run that fails for any reason but interruption is recorded with
// Failed set; an interrupted run is not recorded and the error wraps
// results.ErrInterrupted. Any other error is about recording.
func One(ctx context.Context, ends Ends, job Job, log *slog.Logger) (results.Run, error) {
	if log == nil {
		log = slog.Default()
	}
	dir, p, start := job.Start()
	return results.RecordRun(ctx, dir, start, log, func(run *results.Run) error {
		return measure(ctx, ends, job, dir, p, run)
	}, job.Extra)
}

// measure is one run on ends, recorded into run.
func measure(ctx context.Context, ends Ends, job Job, dir string, p shapedlink.Profile, run *results.Run) error {
	st, err := ends.Open(ctx, dir, p, run)
	if err != nil {
		return err
	}
	defer st.Close(run)
	roles, err := job.Roles(ctx, st, dir)
	if err != nil {
		return err
	}
	cbase, err := st.StartServer(ctx, roles.Server, roles.Within, roles.ServerSpec)
	if err != nil {
		return err
	}
	roles.Client.Certificate = cbase.Transport.Certificate
	cbase.Transport = roles.Client
	exit, err := job.Drive(ctx, st, roles.ClientSpec(cbase), run)
	if err != nil {
		return err
	}
	ended, endErr := st.EndServer(ctx, roles.Linger)
	if err := job.Finish(run, Ended{
		Server: filepath.Join(dir, rig.RoleServer+".json"), Client: cbase.Out,
		ClientLog: filepath.Join(dir, rig.RoleClient+".log"), ClientExit: exit, ServerEnded: ended,
	}); err != nil {
		return err
	}
	return endErr
}
