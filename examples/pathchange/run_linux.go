package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/bench"
	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// prepare gets the privilege to build links: see shapedlink.Reexec.
func prepare() error { return shapedlink.Reexec() }

// runOne builds a link, runs server and client in their namespaces, moves
// the client at the change time, and writes run.json and pathchange.json.
func runOne(ctx context.Context, rc runConfig) (Record, error) {
	log := rc.Logger
	if log == nil {
		log = slog.Default()
	}
	dir := rc.dir()
	if err := os.RemoveAll(dir); err != nil {
		return Record{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Record{}, err
	}
	run := results.Run{Schema: results.SchemaVersion, Cell: rc.Cell, Arm: string(rc.Arm), Repeat: rc.Repeat,
		Started: time.Now(), Duration: rc.Workload.Duration, Warmup: rc.Workload.Warmup}
	link := &eventLog{side: "link", log: log}
	cres, sres, err := measure(ctx, &rc, dir, &run, link)
	run.Finished = time.Now()
	if ctx.Err() != nil {
		return Record{}, fmt.Errorf("run interrupted: %v", context.Cause(ctx))
	}
	if err != nil {
		run.Failed = err.Error()
		log.Warn("run failed", "dir", dir, "err", err)
	}
	rec := Analyse(rc.Cell, string(rc.Arm), rc.Repeat, rc.Change, cres, sres, link.events())
	rec.Failed = run.Failed
	if err := results.WriteJSON(filepath.Join(dir, recordFile), rec); err != nil {
		return rec, err
	}
	if err := results.WriteJSON(filepath.Join(dir, results.RunFile), run); err != nil {
		return rec, err
	}
	return rec, nil
}

func measure(ctx context.Context, rc *runConfig, dir string, run *results.Run, link *eventLog) (cres, sres roleResult, err error) {
	l, err := shapedlink.New(ctx, rc.Profile, rc.Link)
	if err != nil {
		return cres, sres, fmt.Errorf("building the link: %w", err)
	}
	defer l.Close()
	run.Link = results.Link{Backend: string(l.Backend()), Applied: l.Applied(), Limit: rc.Profile.Limit}
	// The new address exists from the start; it is a secondary address,
	// so nothing uses it until the client binds to it or the original is
	// removed.
	newAddr, err := l.AddClientAddr(ctx)
	if err != nil {
		return cres, sres, err
	}
	oldAddr := l.ClientAddr()
	rc.Change.OldAddr, rc.Change.NewAddr = oldAddr.String(), newAddr.String()

	addr := net.JoinHostPort(l.ServerAddr().String(), strconv.Itoa(serverPort))
	cert, err := transport.NewCertificate(l.ServerAddr().String())
	if err != nil {
		return cres, sres, err
	}
	topts := transport.Options{Channels: len(rc.Workload.Channels), TCPInfoInterval: 50 * time.Millisecond}
	if rc.Arm == transport.ArmTCP {
		topts.CongestionControl = rc.Cell.CC
	}
	if rc.Qlog {
		topts.QlogDir = dir
	}
	deadline := time.Now().Add(rc.Workload.Duration + 3*rc.Workload.Timeout + rc.Linger + time.Minute)
	sspec := roleSpec{Role: "server", Arm: rc.Arm, Addr: addr, Transport: topts, Workload: rc.Workload,
		Out: filepath.Join(dir, "server.json"), Deadline: deadline}
	sspec.Transport.Certificate = cert
	cspec := sspec
	cspec.Role = "client"
	cspec.Out = filepath.Join(dir, "client.json")
	cspec.Transport.Certificate = cert.ClientOnly()
	ch := rc.Change
	cspec.Change = &ch

	// Server: it writes its address on a pipe once it listens.
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return cres, sres, err
	}
	srv, err := roles.Start(ctx, l.Server(), sspec.Role, sspec, dir, readyW)
	readyW.Close()
	if err != nil {
		readyR.Close()
		return cres, sres, err
	}
	srvDone := make(chan struct{})
	go func() { _ = srv.Wait(); close(srvDone) }()
	defer bench.StopRole(srv, srvDone)
	if err := bench.WaitReady(ctx, readyR, srvDone, 15*time.Second); err != nil {
		return cres, sres, fmt.Errorf("server did not start listening (see %s): %w", filepath.Join(dir, "server.log"), err)
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
	cli, err := roles.Start(ctx, l.Client(), cspec.Role, cspec, dir, reqW, ansR)
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
		serveControl(reqR, ansW, func() error { return l.RemoveClientAddr(oldAddr) }, link)
	}()
	cliErr := cli.Wait()
	reqR.Close()
	<-served
	ansW.Close()
	link.add("client exited (%v)", exitText(cliErr))

	// A stranded server gets Linger to notice by itself, then is stopped.
	select {
	case <-srvDone:
		link.add("server exited by itself")
	case <-time.After(rc.Linger):
		link.add("server still running %v after the client exited; stopping it", rc.Linger)
		bench.StopRole(srv, srvDone)
	case <-ctx.Done():
	}
	if err := l.Err(); err != nil {
		return cres, sres, err
	}

	cres, cerr := readRoleResult(cspec.Out)
	sres, _ = readRoleResult(sspec.Out)
	if c := cres.Client; c != nil {
		run.Samples = make([]stats.Sample, len(c.Samples))
		for i, s := range c.Samples {
			run.Samples[i] = stats.Sample{Offset: s.Offset, RTT: s.RTT}
		}
		run.Timeouts = c.Timeouts
		run.ThroughputMbit = c.BulkMbps
		run.BulkBytes = c.BulkBytesWindow
		run.BulkBytesTotal = c.BulkBytesTotal
		for _, e := range c.Errors {
			run.ChannelErrors = append(run.ChannelErrors, "client "+e.Error())
		}
	}
	if s := sres.Server; s != nil {
		for _, e := range s.Errors {
			run.ChannelErrors = append(run.ChannelErrors, "server "+e.Error())
		}
	}
	if cres.State != nil {
		run.ConnectTime = cres.State.ConnectTime
		run.Client = encode(cres.State)
	}
	if sres.State != nil {
		run.Server = encode(sres.State)
	}
	switch {
	case cerr != nil:
		return cres, sres, fmt.Errorf("client wrote no result (%v); see %s", cerr, filepath.Join(dir, "client.log"))
	case cres.Client == nil:
		// The session never came up: that is a broken run, not a
		// measurement of the path change.
		return cres, sres, fmt.Errorf("client: %s (see client.log)", cres.Err)
	}
	return cres, sres, nil
}

func encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func readRoleResult(path string) (roleResult, error) {
	var r roleResult
	if err := results.ReadJSON(path, &r); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, errNoResult
		}
		return r, err
	}
	return r, nil
}
