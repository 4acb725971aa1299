package spicelive

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/internal/hostcpu"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// The live session's roles: this binary re-executed in the server
// namespace (Xspice and the tunnel's server end) and in the client
// namespace (the tunnel's client end, spicy, the keystrokes).
var liveRoles = rig.RoleEnv{Role: "QUICBENCH_SPICELIVE_ROLE", Spec: "QUICBENCH_SPICELIVE_SPEC"}

// liveSpec is either role's spec.
type liveSpec struct {
	rig.RoleBase
	Server *serverSpec `json:"server,omitempty"`
	Client *clientSpec `json:"client,omitempty"`
}

// liveResult is either role's result.
type liveResult struct {
	Role   string        `json:"role"`
	Err    string        `json:"error,omitempty"`
	Server *ServerResult `json:"server,omitempty"`
	Client *ClientResult `json:"client,omitempty"`
}

// MaybeRunRole does a run's role and exits, if this process is one: a
// live session's server or client, or a replay's or synthetic run's role
// (bench.MaybeRunRole). Run starts the roles as this binary again, so
// call it first thing in main (and in TestMain).
func MaybeRunRole() {
	bench.MaybeRunRole()
	rig.ServeRole(liveRoles, map[string]func(context.Context, liveSpec, *slog.Logger) (liveResult, error){
		rig.RoleServer: func(ctx context.Context, spec liveSpec, log *slog.Logger) (liveResult, error) {
			if spec.Server == nil {
				return liveResult{}, errors.New("the server role's spec has no server part")
			}
			r, err := runServer(ctx, spec.RoleBase, *spec.Server, log)
			return liveResult{Server: &r}, err
		},
		rig.RoleClient: func(ctx context.Context, spec liveSpec, log *slog.Logger) (liveResult, error) {
			if spec.Client == nil {
				return liveResult{}, errors.New("the client role's spec has no client part")
			}
			r, err := runClient(ctx, spec.RoleBase, *spec.Client, log)
			return liveResult{Client: &r}, err
		},
	}, func(role string, res *liveResult, err error, log *slog.Logger) {
		res.Role = role
		if err != nil {
			res.Err = err.Error()
			log.Error("failed", "err", err)
		}
	})
}

// Prepare gets the privilege to build links, re-executing this binary
// into a user namespace where that is how (shapedlink.Reexec). Call it
// before Run, after MaybeRunRole.
func Prepare() error { return shapedlink.Reexec() }

// password is the session's fixed ticket: the session is a test rig on
// addresses no one else reaches.
const password = "quicbench"

// liveJob is one live run, a loop.Job on rig.Local: Xspice in the server
// namespace, spicy in the client namespace, the tunnel between them over
// the job's arm, and the keys; then the key-to-draw analysis of the
// client end's trace, into rec (written as LiveFile).
type liveJob struct {
	c    Config
	j    Job
	cell results.Cell
	prof shapedlink.Profile
	dir  string
	log  *slog.Logger
	// What the run found: the host's CPU when the server started, how
	// the server ended, and the record, once the roles have ended.
	cpuFrom     hostcpu.Times
	cpuErr      error
	serverEnded bool
	serverExit  error
	rec         *LiveRecord
}

// Start is the run's directory, profile and starting record.
func (lj *liveJob) Start() (string, shapedlink.Profile, results.Run) {
	run := results.NewRun(lj.cell, string(lj.j.Arm), measure.Arm(lj.j.Arm).QUIC(), lj.j.Repeat, lj.c.Duration, lj.c.Warmup)
	run.TCPController = lj.c.armController(lj.j.Arm)
	return lj.dir, lj.prof, run
}

// Roles are the tunnel's options and the session's specs; the server runs
// until it is stopped. The host's CPU is read from here, as the server
// starts.
func (lj *liveJob) Roles(_ context.Context, st rig.Stage, dir string) (loop.Roles, error) {
	link := rig.LinkOf(st)
	if link == nil {
		return loop.Roles{}, errors.New("a live session needs a link built on this machine")
	}
	c := lj.c
	ar := c.forArm(lj.j.Arm)
	arm := transportArm(lj.j.Arm)
	o := tunnelOptions(c, lj.j.Arm)
	// An arm that is not QUIC carries no certificate.
	noCert := func(b rig.RoleBase) rig.RoleBase {
		if !arm.QUIC() {
			b.Transport.Certificate = transport.Certificate{}
		}
		return b
	}
	spiceAddr := net.JoinHostPort(link.ServerAddr().String(), strconv.Itoa(spicePort))
	roles := loop.Roles{Server: o, Client: o, Within: c.Duration + c.KeyTimeout + c.SessionTimeout + c.Settle + 2*time.Minute,
		Linger: 0, // the server runs until it is stopped
		ServerSpec: func(b rig.RoleBase) any {
			return liveSpec{RoleBase: noCert(b), Server: &serverSpec{Arm: arm, SpiceAddr: spiceAddr, Password: password, Dir: dir,
				BusyInterval: c.BusyInterval, Display: c.displaySpec(), Options: ar.serverOptions, SpiceRcvBuf: ar.spiceRcvBuf}}
		},
		ClientSpec: func(b rig.RoleBase) any {
			return liveSpec{RoleBase: noCert(b), Client: &clientSpec{Arm: arm, Password: password, Dir: dir, Duration: c.Duration,
				KeyInterval: c.KeyInterval, Settle: c.Settle, SessionTimeout: c.SessionTimeout, Pixel: c.Pixel, KeyTimeout: c.KeyTimeout,
				Picture: c.Display != xsession.DisplayNone}}
		},
	}
	lj.cpuFrom, lj.cpuErr = hostcpu.Read()
	return roles, nil
}

// Drive runs the client until it ends, or until the server does: the
// server's exit before the client's is its end of the session dying
// (Xspice, an xterm or the tunnel's server end), and ends the client too.
func (lj *liveJob) Drive(ctx context.Context, st rig.Stage, spec any, _ *results.Run) (exit, err error) {
	server := rig.ServerExit(st)
	cli, err := st.StartClient(ctx, spec)
	if err != nil {
		return nil, err
	}
	cliDone := make(chan struct{})
	go func() { exit = cli.Wait(); close(cliDone) }()
	select {
	case <-cliDone:
	case lj.serverExit = <-server:
		lj.serverEnded = true
		rig.StopRole(cli, cliDone)
	}
	return exit, nil
}

// Finish reads the roles' results (the server writes its own when it is
// stopped), the host's CPU over the run and the analyses into the run and
// its LiveRecord.
func (lj *liveJob) Finish(run *results.Run, e loop.Ended) error {
	c, dir, log := lj.c, lj.dir, lj.log
	sres, serr := rig.ReadResult[liveResult](e.Server)
	cres, cerr := rig.ReadResult[liveResult](e.Client)
	rec := &LiveRecord{Server: sres.Server, Client: cres.Client, Position: lj.j.Position}
	lj.rec = rec
	if cpuTo, err := hostcpu.Read(); err == nil && lj.cpuErr == nil {
		use := hostcpu.Between(lj.cpuFrom, cpuTo)
		use.CPUs = hostcpu.CPUs()
		rec.HostCPU = &use
	}
	end := outcome{serverEnded: lj.serverEnded, server: sres, serverRead: serr, serverExit: lj.serverExit,
		client: cres, clientRead: cerr, clientExit: e.ClientExit}
	if err := end.err(); err != nil {
		return err
	}
	rig.RecordStates(run, rec.Server.State, rec.Client.State)
	tr, err := ReadTrace(filepath.Join(dir, ClientTrace))
	if err != nil {
		return err
	}
	if n := rec.analyse(c, tr); n > 0 {
		log.Warn("keys typed never reached the tunnel; they are counted unanswered", "keys", n, "typed", rec.Client.Keys, "dir", dir)
	}
	if c.Pixel {
		if err := rec.analysePixels(c, dir, tr); err != nil {
			return err
		}
	}
	fillRun(run, c, rec, tr)
	if c.Display != xsession.DisplayNone {
		l, err := displayLoad(tr, rec.Client.TypingStart+c.Warmup, rec.Client.TypingEnd, lj.prof.RateMbit)
		if err != nil {
			return fmt.Errorf("the display's load: %w", err)
		}
		l.Workload = c.Display
		rec.Display = &l
		switch {
		case l.Saturated:
		case len(lj.prof.Direction(shapedlink.Down).Cross) > 0:
			log.Info("the display alone did not fill the link; the summary counts the cross flows beside it", "mbit", l.Mbit, "link_mbit", l.LinkMbit, "dir", dir)
		default:
			log.Warn("the display did not saturate the link", "mbit", l.Mbit, "link_mbit", l.LinkMbit, "dir", dir)
		}
		if err := rec.analysePicture(c, dir, tr); err != nil {
			log.Warn("no picture figures for this run", "err", err, "dir", dir)
		}
	}
	return nil
}

// Extra writes the run's LiveRecord, when its roles ended, as LiveFile.
func (lj *liveJob) Extra(results.Run) error {
	if lj.rec == nil {
		return nil
	}
	return results.WriteJSON(filepath.Join(lj.dir, LiveFile), lj.rec)
}

// outcome is how a live run's two roles ended.
type outcome struct {
	// serverEnded says the server exited before the client did.
	serverEnded            bool
	server, client         liveResult
	serverRead, clientRead error // reading their results
	serverExit, clientExit error // their processes' exit
}

// err is why the run failed, or nil when both roles measured. A server
// that ended first is the cause, whatever the client, stopped by it,
// then says.
func (o outcome) err() error {
	switch {
	case o.serverEnded && o.serverRead == nil && o.server.Err != "":
		return fmt.Errorf("server: %s (see server.log and x-server.log)", o.server.Err)
	case o.serverEnded:
		return fmt.Errorf("the server role exited during the session (%v; result: %v); see server.log", o.serverExit, o.serverRead)
	case o.clientRead != nil:
		return fmt.Errorf("the client role wrote no result (%v; exit: %v); see client.log", o.clientRead, o.clientExit)
	case o.client.Err != "":
		return fmt.Errorf("client: %s (see client.log and x-client.log)", o.client.Err)
	case o.serverRead != nil:
		return fmt.Errorf("the server role wrote no result (%v); see server.log", o.serverRead)
	case o.server.Err != "":
		return fmt.Errorf("server: %s (see server.log and x-server.log)", o.server.Err)
	case o.server.Server == nil || o.client.Client == nil:
		return errors.New("a role's result has no measurement")
	}
	return nil
}

// analyse reads the key-to-draw figure from tr, the client end's trace,
// counting as unanswered the keys typed that never reached the tunnel,
// and returns how many did not.
func (rec *LiveRecord) analyse(c Config, tr *spicetrace.Trace) int {
	rec.Analysis = AnalyseRun(c, tr, rec.Server, rec.Client)
	return rec.Analysis.CountTyped(rec.Client.Keys)
}

// tunnelOptions are both tunnel ends' transport options for a run of arm:
// the TCP arms' congestion control, and a new secret of the run's own,
// which the server end's carrier listener asks every channel to prove.
func tunnelOptions(c Config, arm measure.Arm) transport.Options {
	lowat := c.forArm(arm).notSentLowat
	arm = transportArm(arm)
	o := transport.Options{CarrierSecret: []byte(rand.Text())}
	if arm == measure.TCP || arm == measure.TCPMux {
		o.CongestionControl = c.CC
	}
	if cc, ok := arm.PinnedCC(); ok {
		o.CongestionControl = cc
	}
	if !arm.QUIC() && lowat > 0 {
		o.NotSentLowat = lowat
	}
	return o
}
