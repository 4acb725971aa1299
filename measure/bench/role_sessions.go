package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/spicelike"
)

// runServers is the server of a multi-session run: it accepts
// spec.Sessions sessions on one listener (the transport groups channels by
// the session id in their header), then serves them all at once. Which
// accepted session matches which of the client's does not matter: every
// session runs the same workload, and the client's side is the measurement.
func runServers(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
	res := roleResult{}
	ln, err := listenArm(ctx, spec.Arm, spec.Addr, spec.Transport)
	if err != nil {
		return res, err
	}
	defer ln.Close()
	log.Info("listening", "arm", spec.Arm, "addr", ln.Addr().String(), "sessions", spec.Sessions)
	sessions := make([]measure.ArmSession, 0, spec.Sessions)
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for len(sessions) < spec.Sessions {
		s, err := ln.Accept(ctx)
		if err != nil {
			// Even a *transport.ChannelError, after which the listener
			// carries on, means the client is missing a session: stop.
			return res, fmt.Errorf("accept session %d of %d: %w", len(sessions)+1, spec.Sessions, err)
		}
		sessions = append(sessions, s)
	}
	chans := make([][]io.ReadWriter, len(sessions))
	for i, s := range sessions {
		chans[i] = readWriters(s.Channels())
	}
	outs, err := spicelike.RunServers(ctx, spec.Workload, chans)
	res.Sessions = make([]roleSession, len(sessions))
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for i, s := range sessions {
		st := s.State()
		var out *spicelike.ServerResult
		if i < len(outs) {
			out = &outs[i]
			if e := out.Err(); e != nil && err == nil {
				errs = append(errs, fmt.Errorf("session %d: %w", i, e))
			}
		}
		res.Sessions[i] = roleSession{Server: out, State: &st}
	}
	// As in runServer: wait for each client session to close before closing
	// ours, all at once so one slow session does not hold up the others.
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { measure.WaitPeerClose(s.Channels()[0], spec.Workload.Timeout) })
	}
	wg.Wait()
	var written, echoes int64
	for _, o := range outs {
		written += o.BulkBytesWritten
		echoes += o.Echoes
	}
	log.Info("done", "sessions", len(sessions), "bulk_bytes", written, "echoes", echoes)
	return res, errors.Join(errs...)
}

// runClients is the client of a multi-session run: it dials spec.Sessions
// sessions at once, then runs the workload on all of them at once.
func runClients(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
	res := roleResult{}
	n := spec.Sessions
	arm, err := measure.Lookup(string(spec.Arm))
	if err != nil {
		return res, err
	}
	sessions := make([]measure.ArmSession, n)
	dialErrs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := arm.Dial(ctx, spec.Addr, spec.Transport)
			if err != nil {
				dialErrs[i] = fmt.Errorf("dial session %d of %d to %s: %w", i, n, spec.Addr, err)
				return
			}
			sessions[i] = s
		})
	}
	wg.Wait()
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	if err := errors.Join(dialErrs...); err != nil {
		return res, err
	}
	chans := make([][]io.ReadWriter, n)
	for i, s := range sessions {
		chans[i] = readWriters(s.Channels())
		log.Info("connected", "arm", spec.Arm, "session", i, "connect_time", s.State().ConnectTime)
	}
	outs, err := spicelike.RunClients(ctx, spec.Workload, chans)
	res.Sessions = make([]roleSession, n)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for i, s := range sessions {
		st := s.State()
		var out *spicelike.ClientResult
		if i < len(outs) {
			out = &outs[i]
			if e := out.Err(); e != nil && err == nil {
				errs = append(errs, fmt.Errorf("session %d: %w", i, e))
			}
			log.Info("done", "session", i, "samples", len(out.Samples), "timeouts", out.Timeouts, "bulk_mbps", out.BulkMbps)
		}
		res.Sessions[i] = roleSession{Client: out, State: &st}
	}
	return res, errors.Join(errs...)
}
