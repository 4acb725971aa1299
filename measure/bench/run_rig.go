package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// The names of a run's two roles: their specs, logs and results are
// <role>-spec.json, <role>.log and <role>.json in the run's directory.
const (
	RoleServer = "server"
	RoleClient = "client"
)

// ServerPort is where every run's server listens, inside its namespace
// (QUIC on UDP and TCP alike).
const ServerPort = 4433

// RecordRun makes one run and records it as dir/run.json: dir is emptied
// of what an earlier attempt left, measure fills in run, and the run is
// written atomically, with Failed set when measure failed. extra, when not
// nil, writes the command's own records of the run first; it sees the
// finished run. A run stopped by ctx is not recorded at all, so a rerun
// does it again: RecordRun then returns ErrInterrupted. Otherwise the
// error is only about recording; how the measurement went is in Failed.
func RecordRun(ctx context.Context, dir string, run results.Run, log *slog.Logger,
	measure func(run *results.Run) error, extra func(run results.Run) error) (results.Run, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := ResetDir(dir); err != nil {
		return run, err
	}
	err := measure(&run)
	run.Finished = time.Now()
	if ctx.Err() != nil {
		return run, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
	}
	if err != nil {
		run.Failed = err.Error()
		log.Warn("run failed; recorded as unmeasured", "dir", dir, "err", err)
	}
	if extra != nil {
		if err := extra(run); err != nil {
			return run, err
		}
	}
	return run, results.WriteJSON(filepath.Join(dir, results.RunFile), run)
}

// ResetDir makes dir an empty directory: anything in it is the debris of
// an interrupted attempt.
func ResetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// NewRun is the record of a run about to start.
func NewRun(cell results.Cell, arm string, repeat int, w spicelike.Config) results.Run {
	return results.Run{
		Schema:   results.SchemaVersion,
		Cell:     cell,
		Arm:      arm,
		QUIC:     measure.IsQUIC(arm),
		Repeat:   repeat,
		Started:  time.Now(),
		Duration: w.Duration,
		Warmup:   w.Warmup,
	}
}

// Rig is the stage of one run: a fresh link, and the run's server and
// client, each this binary re-executed as one of env's roles inside its end
// of the link, with their specs, logs and results in Dir. Close takes it
// all down.
type Rig struct {
	Link *shapedlink.Link
	Dir  string
	// Addr is where the server listens: its end's address, ServerPort.
	Addr string

	profile shapedlink.Profile
	offload shapedlink.OffloadMode
	env     RoleEnv
	srv     *exec.Cmd
	srvDone chan struct{} // closed when the server has exited
	srvErr  error         // its exit status, once srvDone is closed
}

// NewRig builds the link for profile p.
func NewRig(ctx context.Context, env RoleEnv, dir string, p shapedlink.Profile, o shapedlink.Options) (*Rig, error) {
	l, err := shapedlink.New(ctx, p, o)
	if err != nil {
		return nil, fmt.Errorf("building the link: %w", err)
	}
	if p.Marks() {
		// The link marks instead of dropping: let kernel TCP ask for ECN
		// as quic-go does, in both namespaces, so every arm can use the
		// marks (the kernel's default, 2, only answers). The host record
		// says what was in force.
		for _, ns := range []*shapedlink.Namespace{l.Server(), l.Client()} {
			if err := ns.Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/tcp_ecn", []byte("1"), 0) }); err != nil {
				l.Close()
				return nil, fmt.Errorf("pinning net.ipv4.tcp_ecn to 1 in the %s namespace for a marking link: %w", ns.Role(), err)
			}
		}
	}
	addr := net.JoinHostPort(l.ServerAddr().String(), strconv.Itoa(ServerPort))
	return &Rig{Link: l, Dir: dir, Addr: addr, profile: p, offload: o.Offload, env: env}, nil
}

// Close stops the server if it still runs and removes the link.
func (r *Rig) Close() {
	r.StopServer()
	r.Link.Close()
}

// LinkRecord describes the link for a record: its offload mode only when
// its ends keep their offloads, so a wire-sized link's record is what it
// always was.
func (r *Rig) LinkRecord() results.Link {
	return results.Link{Backend: string(r.Link.Backend()), Applied: r.Link.Applied(), Limit: r.profile.Direction(shapedlink.Down).Limit,
		Offload: string(r.offload)}
}

// HostRecord is the host's state as JSON for a record; the emulator's
// seed, if there is one, goes into l.
func (r *Rig) HostRecord(l *results.Link) (json.RawMessage, error) {
	hs, err := r.Link.Instruments().HostState()
	if err != nil {
		return nil, err
	}
	if len(hs.EmulatorSeeds) > 0 {
		l.Seed = hs.EmulatorSeeds[0]
	}
	b, _ := json.Marshal(hs)
	return b, nil
}

// RoleBase is what every role's spec holds; a command's spec embeds it
// and adds what its roles need.
type RoleBase struct {
	Role      string            `json:"role"`
	Addr      string            `json:"addr"`
	Transport transport.Options `json:"transport"`
	// Out is where the process writes its result.
	Out string `json:"out"`
	// Deadline bounds the whole process.
	Deadline time.Time `json:"deadline"`
}

// RoleDeadline bounds the role's whole process.
func (b RoleBase) RoleDeadline() time.Time { return b.Deadline }

// ResultPath is where the role writes its result.
func (b RoleBase) ResultPath() string { return b.Out }

// RoleBases are the server's and the client's RoleBase for this run, with
// transport options o and a new certificate for the server's address: all
// of it in the server's options, the client's part in the client's.
func (r *Rig) RoleBases(o transport.Options, deadline time.Time) (server, client RoleBase, err error) {
	cert, err := transport.NewCertificate(r.Link.ServerAddr().String())
	if err != nil {
		return server, client, err
	}
	server = RoleBase{Role: RoleServer, Addr: r.Addr, Transport: o, Out: r.ResultPath(RoleServer), Deadline: deadline}
	server.Transport.Certificate = cert
	client = server
	client.Role, client.Out = RoleClient, r.ResultPath(RoleClient)
	client.Transport.Certificate = cert.ClientOnly()
	return server, client, nil
}

// ResultPath is where role writes its result.
func (r *Rig) ResultPath(role string) string { return filepath.Join(r.Dir, role+".json") }

// LogPath is where role's output goes.
func (r *Rig) LogPath(role string) string { return filepath.Join(r.Dir, role+".log") }

// StartServer starts the server in the server's namespace and waits (15 s
// at most) until it says it is listening; the server must call
// SignalReady. Whatever happens, Close or StopServer ends it.
func (r *Rig) StartServer(ctx context.Context, spec any) error {
	srv, ready, err := r.env.StartServer(ctx, r.Link.Server(), RoleServer, spec, r.Dir)
	if err != nil {
		return err
	}
	r.srv, r.srvDone = srv, make(chan struct{})
	go func() { r.srvErr = srv.Wait(); close(r.srvDone) }()
	if err := waitReady(ctx, ready, r.srvDone, 15*time.Second); err != nil {
		return fmt.Errorf("server did not start listening (see %s): %w", r.LogPath(RoleServer), err)
	}
	return nil
}

// ServerDone is closed when the server has exited; ServerErr is then its
// exit status. Call them only after StartServer succeeded.
func (r *Rig) ServerDone() <-chan struct{} { return r.srvDone }

// ServerErr is the server's exit status, once ServerDone is closed.
func (r *Rig) ServerErr() error { return r.srvErr }

// StopServer ends the server if it still runs: SIGTERM, on which a role
// writes what it has, then SIGKILL 5 s later.
func (r *Rig) StopServer() {
	if r.srv != nil {
		StopRole(r.srv, r.srvDone)
	}
}

// StartClient starts the client in the client's namespace, with extra as
// its descriptors 3, 4, ... (close your copies after StartClient). Wait
// for it with the returned command's Wait.
func (r *Rig) StartClient(ctx context.Context, spec any, extra ...*os.File) (*exec.Cmd, error) {
	return r.env.Start(ctx, r.Link.Client(), RoleClient, spec, r.Dir, extra...)
}

// ReadResult reads what a role process wrote to path, or says why there is
// none.
func ReadResult[R any](path string) (R, error) {
	var r R
	if err := results.ReadJSON(path, &r); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, errNoResult
		}
		return r, err
	}
	return r, nil
}

// RecordWorkload puts what the workload measured into run: the client's
// samples, goodput and errors, and the server's errors.
func RecordWorkload(run *results.Run, c *spicelike.ClientResult, s *spicelike.ServerResult) {
	if c != nil {
		run.BulkBytesTotal = c.BulkBytesTotal
		run.Samples, run.SamplesStart = c.Samples, c.Start
		run.Timeouts = c.Timeouts
		run.ThroughputMbit = c.BulkMbps
		run.BulkBytes = c.BulkBytesWindow
		for _, e := range c.Errors {
			run.ChannelErrors = append(run.ChannelErrors, "client "+e.Error())
		}
	}
	if s != nil {
		for _, e := range s.Errors {
			run.ChannelErrors = append(run.ChannelErrors, "server "+e.Error())
		}
	}
}

// RecordStates puts the two ends' transport states into run, and the
// client's connect time.
func RecordStates(run *results.Run, server, client *transport.State) {
	if server != nil {
		run.Server = encodeState(server)
	}
	if client != nil {
		run.Client = encodeState(client)
		run.ConnectTime = client.ConnectTime
	}
}

// A roleJob is a role's spec: it says when the role must be done and where
// its result goes.
type roleJob interface {
	RoleDeadline() time.Time
	ResultPath() string
}

// ServeRole must be called first thing in main (and TestMain). In a
// process started as one of env's roles it reads the spec, runs the role's
// job (jobs[role]) until the spec's deadline or SIGTERM, lets finish fill
// in the result's role and error, writes the result and exits; otherwise
// it returns at once.
func ServeRole[S roleJob, R any](env RoleEnv, jobs map[string]func(context.Context, S, *slog.Logger) (R, error),
	finish func(role string, res *R, err error, log *slog.Logger)) {
	var spec S
	role, log := env.Enter(&spec)
	if role == "" {
		return
	}
	ctx, cancel := roleContext(spec.RoleDeadline())
	defer cancel()
	var res R
	var err error
	if job, ok := jobs[role]; ok {
		res, err = job(ctx, spec, log)
	} else {
		err = fmt.Errorf("unknown %s %q", env.Role, role)
	}
	finish(role, &res, err, log)
	cancel()
	exitRole(spec.ResultPath(), res, err != nil, log)
}

// listenArm listens for the registered arm named arm on addr and tells the
// orchestrator so (SignalReady): how a run's server starts.
func listenArm(ctx context.Context, arm measure.ArmName, addr string, o transport.Options) (measure.ArmListener, error) {
	a, err := measure.Lookup(string(arm))
	if err != nil {
		return nil, err
	}
	ln, err := a.Listen(ctx, addr, o)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	SignalReady(ln.Addr())
	return ln, nil
}

// SignalReady tells the orchestrator that the server is listening, on the
// readiness pipe Rig.StartServer gave it, with its addresses.
func SignalReady(addrs ...any) {
	if ready := os.NewFile(readyFD, "ready"); ready != nil {
		fmt.Fprintln(ready, addrs...)
		ready.Close()
	}
}
