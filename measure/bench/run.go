package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// RunConfig is one run: one cell, one arm, one repeat.
type RunConfig struct {
	Cell     results.Cell
	Profile  shapedlink.Profile // loss included
	Arm      measure.ArmName
	Repeat   int
	Workload spicelike.Config
	Workdir  string
	Link     shapedlink.Options
	// Controller describes quicreno and its settings when the matrix
	// loaded it; recorded as results.Run.TCPController in the runs whose
	// tcp arm ran it.
	Controller string
	// Qlog writes a qlog file per QUIC connection into the run directory.
	Qlog   bool
	Logger *slog.Logger
	// Sessions is how many sessions run at once over the link, each with
	// its own channels; 0 or 1 is one. With Sessions set (1 included) the
	// run records results.Run.Sessions.
	Sessions int
	// Remote, when set, makes the run between two hosts: the server on
	// the daemon's host, the client here, over the path as found, with no
	// link built (Matrix.Remote).
	Remote *Remote
}

// Dir is the run's results directory.
func (rc RunConfig) Dir() string {
	return results.RunDir(rc.Workdir, rc.Cell, string(rc.Arm), rc.Repeat)
}

// ErrInterrupted marks a run stopped by its context: it is not recorded, so
// a rerun does it again.
var ErrInterrupted = errors.New("run interrupted")

// RunOne builds a fresh link, runs the server and client as separate
// processes inside its namespaces, samples the server's egress queue and
// counters while they run, and writes run.json atomically. A run that fails
// for any reason but interruption is recorded with Failed set, so the
// summary counts it; an interrupted run is not recorded at all. Either way
// the link is gone when RunOne returns. With rc.Remote set no link is
// built: the server runs on the daemon's host (measureRemote).
func RunOne(ctx context.Context, rc RunConfig) (results.Run, error) {
	log := rc.Logger
	if log == nil {
		log = slog.Default()
	}
	dir := rc.Dir()
	var failed error
	run, err := RecordRun(ctx, dir, NewRun(rc.Cell, string(rc.Arm), rc.Repeat, rc.Workload), log, func(run *results.Run) error {
		failed = measureRun(ctx, rc, dir, run, log)
		return failed
	}, nil)
	if err != nil {
		return run, err
	}
	return run, failed
}

// measure is one run over a fresh link: the server, then the client with
// the server's egress queue sampled beside it, then what both ends and the
// link recorded, into run. With rc.Remote set it is measureRemote.
func measureRun(ctx context.Context, rc RunConfig, dir string, run *results.Run, log *slog.Logger) error {
	if effectiveCC(rc) == quicreno.Name {
		run.TCPController = rc.Controller
	}
	if rc.Remote != nil {
		return measureRemote(ctx, rc, dir, run, log)
	}
	rig, err := NewRig(ctx, benchRoles, dir, rc.Profile, rc.Link)
	if err != nil {
		return err
	}
	defer rig.Close()
	link := rig.Link
	run.Link = rig.LinkRecord()
	// Read the emulator's counters last (deferred calls run in reverse),
	// before Close stops it, and for failed runs too.
	defer recordLinkEnd(link, run, log)
	if run.Host, err = rig.HostRecord(&run.Link); err != nil {
		log.Warn("host state", "err", err)
	}
	serverSpec, clientSpec, err := roleSpecs(rc, rig, dir)
	if err != nil {
		return err
	}

	// The server first; it says on a pipe when it is listening. Whatever
	// happens, it does not outlive the run.
	defer rig.StopServer()
	if err := rig.StartServer(ctx, serverSpec); err != nil {
		return err
	}

	// Sample the server's egress queue (the direction the display loads)
	// while the client runs.
	stopSampling := sampleServerQueue(ctx, link)
	cli, err := rig.StartClient(ctx, clientSpec)
	if err != nil {
		stopSampling()
		return err
	}
	cliErr := cli.Wait()
	samples, err := stopSampling()
	if err != nil {
		log.Warn("queue sampling ended early", "err", err)
	}
	writeQueueFiles(dir, samples, log)
	counters, cerr := link.Instruments().EgressCounters(shapedlink.ServerEnd)

	// The server ends once the client has closed its channels.
	select {
	case <-rig.ServerDone():
	case <-time.After(20 * time.Second):
		log.Warn("server still running 20s after the client ended; stopping it")
	case <-ctx.Done():
	}

	cres, cerrRead := ReadResult[roleResult](clientSpec.Out)
	sres, serrRead := ReadResult[roleResult](serverSpec.Out)
	recordEnds(run, rc, sres, cres)
	if rc.Arm.QUIC() {
		recordGSO(run, samples, counters, cerr)
	}

	if err := clientOutcome(cres, cerrRead, cliErr, rig.LogPath(RoleClient)); err != nil {
		return err
	}
	if serrRead == nil && sres.Err != "" {
		log.Warn("server reported an error", "err", sres.Err)
	}
	select {
	case <-rig.ServerDone():
		if err := rig.ServerErr(); err != nil {
			log.Warn("server exited with an error", "err", err, "log", rig.LogPath(RoleServer))
		}
	default:
	}
	return nil
}

// recordLinkEnd puts into run what the link can say only at the end: the
// schedule's start and the changes it applied, and the emulator's own
// counters, with a warning when they say it may have distorted the run.
func recordLinkEnd(link *shapedlink.Link, run *results.Run, log *slog.Logger) {
	if start := link.Instruments().ScheduleStart(); !start.IsZero() {
		run.Link.ScheduleStart = start
		var err error
		if run.Link.Changes, err = link.Instruments().AppliedChanges(); err != nil {
			log.Warn("the link's schedule", "err", err)
		}
	}
	if sh, ok := link.Instruments().ShaperStats(); ok {
		run.Link.Shaper = &sh
		if why := sh.Distorted(report.ShaperLateLimit); why != "" {
			log.Warn("the emulator may have distorted this run", "why", why)
		}
	}
}

// roleSpecs are what the server and client processes of rc are told to
// do, their transports writing qlog into dir when rc asks.
func roleSpecs(rc RunConfig, rig *Rig, dir string) (server, client roleSpec, err error) {
	so, co, err := transportOptions(rc)
	if err != nil {
		return server, client, err
	}
	if rc.Qlog {
		so.QlogDir, co.QlogDir = dir, dir
	}
	sbase, cbase, err := rig.RoleBases(so, time.Now().Add(rc.Workload.Duration+2*time.Minute))
	if err != nil {
		return server, client, err
	}
	// The rig's certificate pair names the server's address; the rest is
	// what the arm prepared for each end.
	co.Certificate = cbase.Transport.Certificate
	cbase.Transport = co
	server = roleSpec{RoleBase: sbase, Arm: rc.Arm, Workload: rc.Workload, Sessions: rc.Sessions}
	client = server
	client.RoleBase = cbase
	return server, client, nil
}

// sampleServerQueue samples the server end's egress queue until the
// returned function is called; it returns the samples and why sampling
// ended early, if it did.
func sampleServerQueue(ctx context.Context, link *shapedlink.Link) (stop func() ([]shapedlink.QueueSample, error)) {
	sctx, cancel := context.WithCancel(ctx)
	type sampled struct {
		s   []shapedlink.QueueSample
		err error
	}
	samplesCh := make(chan sampled, 1)
	go func() {
		s, err := link.Instruments().SampleQueue(sctx, shapedlink.ServerEnd, shapedlink.DefaultSampleInterval)
		samplesCh <- sampled{s, err}
	}()
	return func() ([]shapedlink.QueueSample, error) {
		cancel()
		qs := <-samplesCh
		return qs.s, qs.err
	}
}

// writeQueueFiles writes the queue samples into dir: queue.csv, and the
// fullest flow queues in queue_flows.csv.
func writeQueueFiles(dir string, samples []shapedlink.QueueSample, log *slog.Logger) {
	if err := writeQueueCSV(filepath.Join(dir, "queue.csv"), samples); err != nil {
		log.Warn("writing queue samples", "err", err)
	}
	if err := writeFlowsCSV(filepath.Join(dir, "queue_flows.csv"), samples); err != nil {
		log.Warn("writing per-flow queue samples", "err", err)
	}
}

// recordGSO puts a QUIC run's offload evidence into run: from the queue
// samples, and from the server end's egress counters when they could be
// read (cerr nil).
func recordGSO(run *results.Run, samples []shapedlink.QueueSample, counters shapedlink.EgressCounters, cerr error) {
	expected := gsocheck.Expected(transport.DatagramSize, gsocheck.VethL2)
	g, err := gsocheck.FromQueue(gsoSamples(samples), expected, gsocheck.Options{})
	if err == nil {
		run.GSOQueue = &g
	}
	if cerr == nil {
		c := gsocheck.FromCounters(gsocheck.Counters{
			Packets: counters.All.Packets, Bytes: counters.All.Bytes, Oversize: counters.Oversize.Packets,
		}, expected, 100)
		run.GSOCounters = &c
	}
}

// recordEnds puts what the two role processes reported into run: both
// ends' transport states and the client's connect time, every
// connection's congestion control and GSO state, both processes' CPU and
// memory, and the workload's figures. A run over a link and a run between
// two hosts record both ends alike through it.
func recordEnds(run *results.Run, rc RunConfig, sres, cres roleResult) {
	RecordStates(run, sres.State, cres.State)
	states := []*transport.State{sres.State, cres.State}
	if len(sres.Sessions) > 0 || len(cres.Sessions) > 0 {
		// Every session's connections, not only session 0's.
		states = nil
		for _, rs := range [][]roleSession{sres.Sessions, cres.Sessions} {
			for _, s := range rs {
				states = append(states, s.State)
			}
		}
	}
	for _, st := range states {
		if st == nil {
			continue
		}
		run.CongestionControl = append(run.CongestionControl, st.Role+": "+st.CongestionControl)
		for _, q := range st.QUIC {
			run.QUICGSO = append(run.QUICGSO, q.GSO)
		}
	}
	run.ServerUsage, run.ClientUsage = sres.Usage, cres.Usage
	RecordWorkload(run, cres.Client, sres.Server)
	if rc.Sessions >= 1 {
		recordSessions(run, cres)
	}
}

// clientOutcome is why the run failed, if the client's result (or its
// absence: readErr, with the process's exit status exitErr and its log at
// logPath) says it did.
func clientOutcome(cres roleResult, readErr, exitErr error, logPath string) error {
	switch {
	case cres.Err != "":
		return fmt.Errorf("client: %s (see client.log)", cres.Err)
	case readErr != nil:
		return fmt.Errorf("client wrote no result (%v; exit: %v); see %s", readErr, exitErr, logPath)
	case cres.Client == nil:
		return errors.New("client result has no measurement")
	}
	return nil
}

// recordSessions fills run.Sessions from the client's per-session results
// (or its single result), and makes BulkBytesTotal the sum over sessions.
func recordSessions(run *results.Run, cres roleResult) {
	rs := cres.Sessions
	if len(rs) == 0 && cres.Client != nil {
		rs = []roleSession{{Client: cres.Client, State: cres.State}}
	}
	var total int64
	for i, s := range rs {
		sr := results.SessionResult{Index: i}
		if c := s.Client; c != nil {
			sr.Samples = c.Samples
			sr.Timeouts = c.Timeouts
			sr.ThroughputMbit = c.BulkMbps
			sr.BulkBytes = c.BulkBytesWindow
			sr.BulkBytesTotal = c.BulkBytesTotal
			for _, e := range c.Errors {
				sr.ChannelErrors = append(sr.ChannelErrors, "client "+e.Error())
			}
			total += c.BulkBytesTotal
		}
		if s.State != nil {
			sr.ConnectTime = s.State.ConnectTime
		}
		run.Sessions = append(run.Sessions, sr)
	}
	if len(rs) > 1 {
		run.BulkBytesTotal = total
		// Session 0's channel errors are already at the top level; say
		// which session the others' came from.
		for _, sr := range run.Sessions[1:] {
			for _, e := range sr.ChannelErrors {
				run.ChannelErrors = append(run.ChannelErrors, fmt.Sprintf("session %d: %s", sr.Index, e))
			}
		}
	}
}

// effectiveCC is the congestion control rc's arm runs: an arm's own
// (measure.TCPWith), else the cell's for every arm but the QUIC ones.
func effectiveCC(rc RunConfig) string {
	if cc, ok := measure.PinnedCC(string(rc.Arm)); ok {
		return cc
	}
	if rc.Arm.QUIC() {
		return ""
	}
	return rc.Cell.CC
}

// transportOptions are the server's and the client's transport settings
// for rc's arm: the cell's TCP congestion control for every arm but the
// QUIC ones (whose controller is quic-go's), then what the arm prepares
// (measure.PrepareOptions), as measure.Run does.
func transportOptions(rc RunConfig) (server, client transport.Options, err error) {
	arm, err := measure.Lookup(string(rc.Arm))
	if err != nil {
		return server, client, err
	}
	var o transport.Options
	if !rc.Arm.QUIC() {
		o.CongestionControl = rc.Cell.CC
	}
	return measure.PrepareOptions(arm, rc.Workload, o)
}

// waitReady waits for a server's readiness line on ready (closing it),
// until the server exits, timeout passes or ctx ends.
func waitReady(ctx context.Context, ready *os.File, exited <-chan struct{}, timeout time.Duration) error {
	defer ready.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(ready).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		if s == "" {
			return errors.New("it exited before listening")
		}
		return nil
	case <-exited:
		return errors.New("it exited before listening")
	case <-time.After(timeout):
		return fmt.Errorf("no readiness after %v", timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func gsoSamples(in []shapedlink.QueueSample) []gsocheck.Sample {
	out := make([]gsocheck.Sample, len(in))
	for i, s := range in {
		out[i] = gsocheck.Sample{At: s.At, Packets: s.Packets, Bytes: s.Bytes}
	}
	return out
}

// writeFlowsCSV keeps the per-flow occupancy of an FQ-CoDel queue, one
// line per flow queue per poll, on the same time base as queue.csv. It
// writes nothing when no sample has flows (any other queue).
func writeFlowsCSV(path string, s []shapedlink.QueueSample) error {
	if !slices.ContainsFunc(s, func(q shapedlink.QueueSample) bool { return len(q.Flows) > 0 }) {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "offset_us,flow_queue,packets,bytes")
	t0 := s[0].At
	for _, q := range s {
		for _, fl := range q.Flows {
			fmt.Fprintf(w, "%d,%d,%d,%d\n", q.At.Sub(t0).Microseconds(), fl.Queue, fl.Packets, fl.Bytes)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeQueueCSV keeps the queue samples compactly: one line per poll.
func writeQueueCSV(path string, s []shapedlink.QueueSample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "offset_us,packets,bytes,drops,loss_drops,limit_drops")
	var t0 time.Time
	if len(s) > 0 {
		t0 = s[0].At
	}
	for _, q := range s {
		fmt.Fprintf(w, "%d,%d,%d,%d,%d,%d\n", q.At.Sub(t0).Microseconds(), q.Packets, q.Bytes, q.Drops, q.LossDrops, q.LimitDrops)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
