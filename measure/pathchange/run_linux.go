package pathchange

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Prepare gets the privilege to build links: as root it does nothing; as
// an ordinary user it re-executes the program in a user and network
// namespace of its own and exits with its status (shapedlink.Reexec).
func Prepare() error { return shapedlink.Reexec() }

// runOne builds a link, runs server and client in their namespaces, moves
// the client at the change time, and writes run.json and pathchange.json.
func runOne(ctx context.Context, rc runConfig) (Record, error) {
	log := rc.Logger
	if log == nil {
		log = slog.Default()
	}
	dir := rc.dir()
	link := &eventLog{side: "link", log: log}
	var cres, sres roleResult
	var rec Record
	_, err := bench.RecordRun(ctx, dir, bench.NewRun(rc.Cell, string(rc.Arm), rc.Repeat, rc.Workload), log,
		func(run *results.Run) (err error) {
			cres, sres, err = measureRun(ctx, &rc, dir, run, link)
			return err
		},
		func(run results.Run) error {
			rec = analyse(rc.Cell, string(rc.Arm), rc.Repeat, rc.Change, cres, sres, link.events())
			rec.Failed = run.Failed
			return results.WriteJSON(filepath.Join(dir, RecordFile), rec)
		})
	return rec, err
}

// roleSpecs are the server's and the client's specs for rc's run in dir:
// the client's carries the change.
func roleSpecs(rig *bench.Rig, rc *runConfig, dir string) (sspec, cspec roleSpec, err error) {
	topts := transport.Options{Channels: len(rc.Workload.Channels), TCPInfoInterval: 50 * time.Millisecond}
	if rc.Arm == transport.ArmTCP {
		topts.CongestionControl = rc.Cell.CC
	}
	if rc.Qlog {
		topts.QlogDir = dir
	}
	deadline := time.Now().Add(rc.Workload.Duration + 3*rc.Workload.Timeout + rc.Linger + time.Minute)
	sbase, cbase, err := rig.RoleBases(topts, deadline)
	if err != nil {
		return sspec, cspec, err
	}
	sspec = roleSpec{RoleBase: sbase, Arm: rc.Arm, Workload: rc.Workload}
	cspec = roleSpec{RoleBase: cbase, Arm: rc.Arm, Workload: rc.Workload}
	ch := rc.Change
	cspec.Change = &ch
	cspec.HoldEcho = rc.holdEcho
	return sspec, cspec, nil
}

func measureRun(ctx context.Context, rc *runConfig, dir string, run *results.Run, link *eventLog) (cres, sres roleResult, err error) {
	rig, err := bench.NewRig(ctx, roles, dir, rc.Profile, rc.Link)
	if err != nil {
		return cres, sres, err
	}
	defer rig.Close()
	l := rig.Link
	run.Link = rig.LinkRecord()
	// The new address exists from the start; it is a secondary address,
	// so nothing uses it until the client binds to it or the original is
	// removed.
	newAddr, err := l.Control().AddClientAddr(ctx)
	if err != nil {
		return cres, sres, err
	}
	oldAddr := l.ClientAddr()
	rc.Change.OldAddr, rc.Change.NewAddr = oldAddr.String(), newAddr.String()

	sspec, cspec, err := roleSpecs(rig, rc, dir)
	if err != nil {
		return cres, sres, err
	}

	// Server: it writes its address on a pipe once it listens.
	if err := rig.StartServer(ctx, sspec); err != nil {
		return cres, sres, err
	}

	// Client: fd 3 carries its requests to us, fd 4 our answers.
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return cres, sres, err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return cres, sres, err
	}
	cli, err := rig.StartClient(ctx, cspec, reqW, ansR)
	reqW.Close()
	ansR.Close()
	if err != nil {
		reqR.Close()
		ansW.Close()
		return cres, sres, err
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		serveControl(reqR, ansW, func() error {
			if rc.beforeRemove != nil {
				if err := rc.beforeRemove(l); err != nil {
					return err
				}
			}
			return l.Control().RemoveClientAddr(oldAddr)
		}, link)
	}()
	cliErr := cli.Wait()
	reqR.Close()
	<-served
	ansW.Close()
	link.add("client exited (%v)", exitText(cliErr))

	// A stranded server gets Linger to notice by itself, then is stopped.
	select {
	case <-rig.ServerDone():
		link.add("server exited by itself")
	case <-time.After(rc.Linger):
		link.add("server still running %v after the client exited; stopping it", rc.Linger)
		rig.StopServer()
	case <-ctx.Done():
	}
	if err := l.Err(); err != nil {
		return cres, sres, err
	}

	cres, cerr := bench.ReadResult[roleResult](cspec.Out)
	sres, _ = bench.ReadResult[roleResult](sspec.Out)
	bench.RecordWorkload(run, cres.Client, sres.Server)
	bench.RecordStates(run, sres.State, cres.State)
	switch {
	case cerr != nil:
		return cres, sres, fmt.Errorf("client wrote no result (%v); see %s", cerr, rig.LogPath(bench.RoleClient))
	case cres.Client == nil:
		// The session never came up: that is a broken run, not a
		// measurement of the path change.
		return cres, sres, fmt.Errorf("client: %s (see client.log)", cres.Err)
	}
	return cres, sres, nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
