package pathchange

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Prepare gets the privilege to build links: as root it does nothing; as
// an ordinary user it re-executes the program in a user and network
// namespace of its own and exits with its status (shapedlink.Reexec).
func Prepare() error { return shapedlink.Reexec() }

// runOne makes rc's run on a fresh link (loop.One): the client moves at
// the change time; run.json and pathchange.json record it.
func runOne(ctx context.Context, rc runConfig) (Record, error) {
	log := rc.Logger
	if log == nil {
		log = slog.Default()
	}
	j := &job{rc: rc, log: log, link: &eventLog{side: "link", log: log}}
	_, err := loop.One(ctx, rig.Local{Env: roles, Link: rc.Link, Log: log}, j, log)
	return j.rec, err
}

// job is one path-change run, a loop.Job: what the client's moves need
// of the link, and what the roles reported for the record.
type job struct {
	rc         runConfig
	log        *slog.Logger
	link       *eventLog
	l          *shapedlink.Link
	oldAddr    netip.Addr
	cres, sres roleResult
	rec        Record
}

func (j *job) Start() (string, shapedlink.Profile, results.Run) {
	rc := j.rc
	return rc.dir(), rc.Profile, results.NewRun(rc.Cell, string(rc.Arm), rc.Arm.IsQUIC(), rc.Repeat, rc.Workload.Duration, rc.Workload.Warmup)
}

// Roles gives the client a second address, which it moves to: a
// secondary address, so nothing uses it until the client binds to it or
// the original is removed. The client's spec carries the change.
func (j *job) Roles(ctx context.Context, st rig.Stage, dir string) (loop.Roles, error) {
	rc := &j.rc
	j.l = rig.LinkOf(st)
	if j.l == nil {
		return loop.Roles{}, fmt.Errorf("a path change needs a link built on this machine")
	}
	newAddr, err := j.l.Control().AddClientAddr(ctx)
	if err != nil {
		return loop.Roles{}, err
	}
	j.oldAddr = j.l.ClientAddr()
	rc.Change.OldAddr, rc.Change.NewAddr = j.oldAddr.String(), newAddr.String()
	topts := transport.Options{Channels: len(rc.Workload.Channels), TCPInfoInterval: 50 * time.Millisecond}
	if rc.Arm == transport.ArmTCP {
		topts.CongestionControl = rc.Cell.CC
	}
	if rc.Qlog {
		topts.QlogDir = dir
	}
	return loop.Roles{
		Server: topts, Client: topts,
		Within: rc.Workload.Duration + 3*rc.Workload.Timeout + rc.Linger + time.Minute,
		Linger: rc.Linger,
		ServerSpec: func(b rig.RoleBase) any {
			return roleSpec{RoleBase: b, Arm: rc.Arm, Workload: rc.Workload}
		},
		ClientSpec: func(b rig.RoleBase) any {
			ch := rc.Change
			return roleSpec{RoleBase: b, Arm: rc.Arm, Workload: rc.Workload, Change: &ch, HoldEcho: rc.holdEcho}
		},
	}, nil
}

// Drive runs the client with two pipes: fd 3 carries its requests to us,
// fd 4 our answers; its "remove" takes the old address away.
func (j *job) Drive(ctx context.Context, st rig.Stage, spec any, _ *results.Run) (exit, err error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	cli, err := st.StartClient(ctx, spec, reqW, ansR)
	reqW.Close()
	ansR.Close()
	if err != nil {
		reqR.Close()
		ansW.Close()
		return nil, err
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		serveControl(reqR, ansW, func() error {
			if j.rc.beforeRemove != nil {
				if err := j.rc.beforeRemove(j.l); err != nil {
					return err
				}
			}
			return j.l.Control().RemoveClientAddr(j.oldAddr)
		}, j.link)
	}()
	exit = cli.Wait()
	reqR.Close()
	<-served
	ansW.Close()
	j.link.add("client exited (%v)", exitText(exit))
	return exit, nil
}

// Finish records the workload and the ends' states. A stranded server
// had Linger to notice by itself before it was stopped.
func (j *job) Finish(run *results.Run, e loop.Ended) error {
	if e.ServerEnded {
		j.link.add("server exited by itself")
	} else {
		j.link.add("server still running %v after the client exited; stopping it", j.rc.Linger)
	}
	cres, cerr := rig.ReadResult[roleResult](e.Client)
	sres, _ := rig.ReadResult[roleResult](e.Server)
	j.cres, j.sres = cres, sres
	rig.RecordWorkload(run, cres.Client, sres.Server)
	rig.RecordStates(run, sres.State, cres.State)
	switch {
	case cerr != nil:
		return fmt.Errorf("client wrote no result (%v); see %s", cerr, e.ClientLog)
	case cres.Client == nil:
		// The session never came up: that is a broken run, not a
		// measurement of the path change.
		return fmt.Errorf("client: %s (see client.log)", cres.Err)
	}
	return nil
}

// Extra writes pathchange.json: the analysis of the finished run.
func (j *job) Extra(run results.Run) error {
	rc := j.rc
	j.rec = analyse(rc.Cell, string(rc.Arm), rc.Repeat, rc.Change, j.cres, j.sres, j.link.events())
	j.rec.Failed = run.Failed
	return results.WriteJSON(filepath.Join(rc.dir(), recordFile), j.rec)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
