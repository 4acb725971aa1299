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

// password is the session's fixed ticket: the session is a test rg on
// addresses no one else reaches.
const password = "quicbench"

// measureLive makes one live run over a fresh link: Xspice in the server
// namespace, spicy in the client namespace, the tunnel between them over
// the job's arm, and the keys; then the key-to-draw analysis of the
// client end's trace.
func measureLive(ctx context.Context, c Config, j Job, dir string, run *results.Run, log *slog.Logger) (*LiveRecord, error) {
	_, prof, err := c.cell(j.Profile)
	if err != nil {
		return nil, err
	}
	rg, err := rig.NewRig(ctx, liveRoles, dir, prof, c.linkOptions(log))
	if err != nil {
		return nil, err
	}
	defer rg.Close()
	run.Link = rg.LinkRecord()
	if run.Host, err = rg.HostRecord(&run.Link); err != nil {
		log.Warn("host state", "err", err)
	}
	defer func() {
		if sh, ok := rg.Link.Instruments().ShaperStats(); ok {
			run.Link.Shaper = &sh
		}
	}()
	ar := c.forArm(j.Arm)
	arm := transportArm(j.Arm)
	o := tunnelOptions(c, j.Arm)
	deadline := time.Now().Add(c.Duration + c.KeyTimeout + c.SessionTimeout + c.Settle + 2*time.Minute)
	sbase, cbase, err := rg.RoleBases(o, deadline)
	if err != nil {
		return nil, err
	}
	if !arm.IsQUIC() {
		sbase.Transport.Certificate, cbase.Transport.Certificate = transport.Certificate{}, transport.Certificate{}
	}
	spiceAddr := net.JoinHostPort(rg.Link.ServerAddr().String(), strconv.Itoa(SpicePort))
	sspec := liveSpec{RoleBase: sbase, Server: &serverSpec{Arm: arm, SpiceAddr: spiceAddr, Password: password, Dir: dir, BusyInterval: c.BusyInterval,
		Display: c.displaySpec(), Options: ar.serverOptions, SpiceRcvBuf: ar.spiceRcvBuf}}
	cspec := liveSpec{RoleBase: cbase, Client: &clientSpec{Arm: arm, Password: password, Dir: dir, Duration: c.Duration,
		KeyInterval: c.KeyInterval, Settle: c.Settle, SessionTimeout: c.SessionTimeout, Pixel: c.Pixel, KeyTimeout: c.KeyTimeout,
		Picture: c.Display != xsession.DisplayNone}}
	defer rg.StopServer()
	cpuFrom, cpuErr := hostcpu.Read()
	if err := rg.StartServer(ctx, sspec); err != nil {
		return nil, err
	}
	cli, err := rg.StartClient(ctx, cspec)
	if err != nil {
		return nil, err
	}
	// The server runs until it is stopped: its exit before the client's
	// is its end of the session dying (Xspice, an xterm or the tunnel's
	// server end), and ends the client too.
	cliDone := make(chan struct{})
	var cliErr error
	go func() { cliErr = cli.Wait(); close(cliDone) }()
	serverEnded := false
	select {
	case <-cliDone:
	case <-rg.ServerDone():
		serverEnded = true
		rig.StopRole(cli, cliDone)
	}
	rg.StopServer() // it writes its result on SIGTERM
	sres, serr := rig.ReadResult[liveResult](sbase.Out)
	cres, cerr := rig.ReadResult[liveResult](cbase.Out)
	rec := &LiveRecord{Server: sres.Server, Client: cres.Client, Position: j.Position}
	if cpuTo, err := hostcpu.Read(); err == nil && cpuErr == nil {
		use := hostcpu.Between(cpuFrom, cpuTo)
		use.CPUs = hostcpu.CPUs()
		rec.HostCPU = &use
	}
	end := outcome{serverEnded: serverEnded, server: sres, serverRead: serr, serverExit: rg.ServerErr(),
		client: cres, clientRead: cerr, clientExit: cliErr}
	if err := end.err(); err != nil {
		return rec, err
	}
	rig.RecordStates(run, rec.Server.State, rec.Client.State)
	tr, err := ReadTrace(filepath.Join(dir, ClientTrace))
	if err != nil {
		return rec, err
	}
	if n := rec.analyse(c, tr); n > 0 {
		log.Warn("keys typed never reached the tunnel; they are counted unanswered", "keys", n, "typed", rec.Client.Keys, "dir", dir)
	}
	if c.Pixel {
		if err := rec.analysePixels(c, dir, tr); err != nil {
			return rec, err
		}
	}
	fillRun(run, c, rec, tr)
	if c.Display != xsession.DisplayNone {
		l, err := displayLoad(tr, rec.Client.TypingStart+c.Warmup, rec.Client.TypingEnd, prof.RateMbit)
		if err != nil {
			return rec, fmt.Errorf("the display's load: %w", err)
		}
		l.Workload = c.Display
		rec.Display = &l
		if !l.Saturated {
			log.Warn("the display did not saturate the link", "mbit", l.Mbit, "link_mbit", l.LinkMbit, "dir", dir)
		}
		if err := rec.analysePicture(c, dir, tr); err != nil {
			log.Warn("no picture figures for this run", "err", err, "dir", dir)
		}
	}
	return rec, nil
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
func tunnelOptions(c Config, arm transport.Arm) transport.Options {
	lowat := c.forArm(arm).notSentLowat
	arm = transportArm(arm)
	o := transport.Options{CarrierSecret: []byte(rand.Text())}
	if arm == transport.ArmTCP || string(arm) == measure.TCPMux.Name() {
		o.CongestionControl = c.CC
	}
	if cc, ok := measure.PinnedCC(string(arm)); ok {
		o.CongestionControl = cc
	}
	if !arm.IsQUIC() && lowat > 0 {
		o.NotSentLowat = lowat
	}
	return o
}
