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
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// RunConfig is one run of the matrix (a plan.Run), as a loop.Job.
type RunConfig struct{ plan.Run }

// RunOne makes rc's run on a fresh link on this machine (loop.One with
// rig.Local): the server and client as separate processes inside its
// namespaces, the server's egress queue and counters sampled while they
// run, and run.json written atomically. A run that fails for any reason
// but interruption is recorded with Failed set, so the summary counts it;
// an interrupted run is not recorded at all (results.ErrInterrupted).
func RunOne(ctx context.Context, rc RunConfig) (results.Run, error) {
	return loop.One(ctx, rig.Local{Env: benchRoles, Link: rc.Link, Log: rc.Logger}, rc, rc.Logger)
}

// Start is the run's directory, profile and starting record.
func (rc RunConfig) Start() (string, shapedlink.Profile, results.Run) {
	run := results.NewRun(rc.Cell, string(rc.Arm), rc.Arm.QUIC(), rc.Repeat, rc.Workload.Duration, rc.Workload.Warmup)
	if effectiveCC(rc) == quicreno.Name {
		run.TCPController = rc.Controller
	}
	return rc.Dir(), rc.Profile, run
}

// Roles are what the run's server and client are told: the arm's
// transport options (qlog into dir when rc asks), the workload and the
// sessions.
func (rc RunConfig) Roles(_ context.Context, _ rig.Stage, dir string) (loop.Roles, error) {
	so, co, err := transportOptions(rc)
	if err != nil {
		return loop.Roles{}, err
	}
	if rc.Qlog {
		so.QlogDir, co.QlogDir = dir, dir
	}
	spec := func(b rig.RoleBase) any {
		return roleSpec{RoleBase: b, Arm: rc.Arm, Workload: rc.Workload, Sessions: rc.Sessions}
	}
	return loop.Roles{Server: so, Client: co, Within: rc.Workload.Duration + 2*time.Minute, Linger: 20 * time.Second,
		ServerSpec: spec, ClientSpec: spec}, nil
}

// Drive runs the client; over a link the server's egress queue (the
// direction the display loads) is sampled beside it, and a QUIC run's
// offload evidence recorded.
func (rc RunConfig) Drive(ctx context.Context, st rig.Stage, spec any, run *results.Run) (exit, err error) {
	link := rig.LinkOf(st)
	if link == nil {
		cli, err := st.StartClient(ctx, spec)
		if err != nil {
			return nil, err
		}
		return cli.Wait(), nil
	}
	stopSampling := sampleServerQueue(ctx, link)
	cli, err := st.StartClient(ctx, spec)
	if err != nil {
		stopSampling()
		return nil, err
	}
	exit = cli.Wait()
	samples, err := stopSampling()
	if err != nil {
		rc.log().Warn("queue sampling ended early", "err", err)
	}
	writeQueueFiles(rc.Dir(), samples, rc.log())
	counters, cerr := link.Instruments().EgressCounters(shapedlink.ServerEnd)
	if rc.Arm.QUIC() {
		recordGSO(run, samples, counters, cerr)
	}
	return exit, nil
}

// Finish records what the two ends reported, and says whether the client
// measured.
func (rc RunConfig) Finish(run *results.Run, e loop.Ended) error {
	cres, cerrRead := rig.ReadResult[roleResult](e.Client)
	sres, serrRead := rig.ReadResult[roleResult](e.Server)
	recordEnds(run, rc, sres, cres)
	if err := clientOutcome(cres, cerrRead, e.ClientExit, e.ClientLog); err != nil {
		return err
	}
	if serrRead == nil && sres.Err != "" {
		rc.log().Warn("server reported an error", "err", sres.Err)
	}
	return nil
}

// Extra writes nothing: run.json is the matrix's whole record.
func (RunConfig) Extra(results.Run) error { return nil }

func (rc RunConfig) log() *slog.Logger {
	if rc.Logger == nil {
		return slog.Default()
	}
	return rc.Logger
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
	s0, c0 := sres.first(), cres.first()
	rig.RecordStates(run, s0.State, c0.State)
	// Every session's connections, the server's first.
	for _, rs := range [][]roleSession{sres.Sessions, cres.Sessions} {
		for _, s := range rs {
			if st := s.State; st != nil {
				run.CongestionControl = append(run.CongestionControl, st.Role+": "+st.CongestionControl)
				for _, q := range st.QUIC {
					run.QUICGSO = append(run.QUICGSO, q.GSO)
				}
			}
		}
	}
	run.ServerUsage, run.ClientUsage = sres.Usage, cres.Usage
	rig.RecordWorkload(run, c0.Client, s0.Server)
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
	case cres.first().Client == nil:
		return errors.New("client result has no measurement")
	}
	return nil
}

// recordSessions fills run.Sessions from the client's per-session results,
// and makes BulkBytesTotal the sum over sessions.
func recordSessions(run *results.Run, cres roleResult) {
	rs := cres.Sessions
	if len(rs) == 1 && rs[0].Client == nil {
		rs = nil // one session that measured nothing
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
// (measure.Arm.PinnedCC), else the cell's for every arm but the QUIC ones.
func effectiveCC(rc RunConfig) string {
	if cc, ok := rc.Arm.PinnedCC(); ok {
		return cc
	}
	if rc.Arm.QUIC() {
		return ""
	}
	return rc.Cell.CC
}

// transportOptions are the server's and the client's transport settings
// for rc's arm: the cell's congestion control for every arm that runs it
// (measure.Arm.CellCC: kernel TCP's and quinn's; quic-go's arms keep their
// own), then what the arm prepares (measure.PrepareOptions), as measure.Run
// does.
func transportOptions(rc RunConfig) (server, client transport.Options, err error) {
	arm, err := measure.Lookup(string(rc.Arm))
	if err != nil {
		return server, client, err
	}
	var o transport.Options
	if rc.Arm.CellCC() {
		o.CongestionControl = rc.Cell.CC
	}
	return measure.PrepareOptions(arm, rc.Workload, o)
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
