package twohost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/measure/rig"

	"github.com/shakenfist/quicbench/transport"
)

// daemonRun is the server process of the run in progress.
type daemonRun struct {
	name    string
	dir     string
	out     string
	started time.Time
	within  time.Duration // the server's deadline is started+within
	cmd     *exec.Cmd
	done    chan struct{}
	err     error // the exit status, once done is closed
}

// stop ends the run's server if it still runs and removes its directory.
func (r *daemonRun) stop() {
	if r.cmd != nil {
		rig.StopRole(r.cmd, r.done)
	}
	os.RemoveAll(r.dir)
}

// session answers one authenticated driver's ops until it says bye, goes
// quiet or breaks the protocol. A server still running when it ends is
// stopped.
func (d *Daemon) session(ctx context.Context, cc *ctlConn) error {
	var run *daemonRun
	defer func() {
		if run != nil {
			run.stop()
		}
	}()
	for {
		wait := remoteOpTimeout
		if run != nil {
			// The driver's client runs until the server's deadline at most.
			wait = time.Until(run.deadline()) + time.Minute
		}
		m, err := cc.recv(wait)
		if err != nil {
			return err
		}
		switch m.Op {
		case "bye":
			return nil
		case "probe":
			if err := d.probe(ctx, cc); err != nil {
				return err
			}
		case "start":
			if run != nil {
				d.log.Warn("a new run started before the last one finished; stopping its server", "run", run.name)
				run.stop()
				run = nil
			}
			var why string
			run, why = d.start(ctx, cc, m)
			if why != "" {
				d.log.Warn("run not started", "run", m.Run, "why", why)
				if err := cc.send(ctlMsg{Op: "error", Why: why}, remoteOpTimeout); err != nil {
					return err
				}
			}
		case "finish":
			if run == nil {
				if err := cc.send(ctlMsg{Op: "error", Why: "finish without a running server"}, remoteOpTimeout); err != nil {
					return err
				}
				continue
			}
			err := d.finish(cc, run)
			run = nil
			if err != nil {
				return err
			}
		default:
			_ = cc.send(ctlMsg{Op: "error", Why: fmt.Sprintf("unknown op %q", m.Op)}, remoteOpTimeout)
			return fmt.Errorf("unknown op %q", m.Op)
		}
	}
}

// deadline is when the run's server must be done.
func (r *daemonRun) deadline() time.Time { return r.started.Add(r.within) }

// probe answers the driver's UDP echoes on the control port's number,
// from the session's peer only, until the driver says it is done or
// probeWindow passes.
func (d *Daemon) probe(ctx context.Context, cc *ctlConn) error {
	local := cc.c.LocalAddr().(*net.TCPAddr)
	peer := cc.c.RemoteAddr().(*net.TCPAddr)
	addr := net.JoinHostPort(local.IP.String(), strconv.Itoa(d.port))
	var pc net.PacketConn
	var err error
	if d.cfg.Namespace != nil {
		pc, err = d.cfg.Namespace.ListenPacket(ctx, "udp", addr)
	} else {
		pc, err = (&net.ListenConfig{}).ListenPacket(ctx, "udp", addr)
	}
	if err != nil {
		return cc.send(ctlMsg{Op: "error", Why: fmt.Sprintf("the probe cannot listen on udp %s: %v", addr, err)}, remoteOpTimeout)
	}
	defer pc.Close()
	if err := cc.send(ctlMsg{Op: "probing", Port: d.port}, remoteOpTimeout); err != nil {
		return err
	}
	echoed := make(chan int, 1)
	go func() {
		n := 0
		defer func() { echoed <- n }()
		_ = pc.SetReadDeadline(time.Now().Add(probeWindow))
		buf := make([]byte, 2*probeSize)
		for {
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			u, ok := from.(*net.UDPAddr)
			if !ok || !u.IP.Equal(peer.IP) || k != probeSize || string(buf[:len(probeMagic)]) != string(probeMagic) {
				continue
			}
			if _, err := pc.WriteTo(buf[:k], from); err == nil {
				n++
			}
		}
	}()
	m, err := cc.recv(probeWindow + d.cfg.HandshakeTimeout)
	pc.Close()
	n := <-echoed
	if err != nil {
		return err
	}
	if m.Op != "probe-done" {
		return fmt.Errorf("expected \"probe-done\", got %q", m.Op)
	}
	return cc.send(ctlMsg{Op: "probed", Echoed: n}, remoteOpTimeout)
}

// start checks the driver's spec, completes it (address, certificate,
// deadline, result path), starts the server where the daemon runs, and
// answers ready once it listens. A reason not to run comes back as why.
func (d *Daemon) start(ctx context.Context, cc *ctlConn, m ctlMsg) (*daemonRun, string) {
	if len(m.Spec) == 0 {
		return nil, "start without a spec"
	}
	var spec map[string]json.RawMessage
	var base rig.RoleBase
	if err := json.Unmarshal(m.Spec, &spec); err != nil {
		return nil, "a spec that does not parse: " + err.Error()
	}
	if err := json.Unmarshal(m.Spec, &base); err != nil {
		return nil, "a spec that does not parse: " + err.Error()
	}
	if m.Within <= 0 || m.Within > d.cfg.MaxWithin {
		return nil, fmt.Sprintf("a run of %v is outside (0, %v]", m.Within, d.cfg.MaxWithin)
	}
	if err := d.cfg.Check(m.Spec); err != nil {
		return nil, err.Error()
	}
	host := cc.c.LocalAddr().(*net.TCPAddr).IP.String()
	cert, err := transport.NewCertificate(host)
	if err != nil {
		return nil, err.Error()
	}
	d.mu.Lock()
	d.runs++
	n := d.runs
	d.mu.Unlock()
	run := &daemonRun{name: m.Run, dir: filepath.Join(d.dir, fmt.Sprintf("run-%d", n)), started: time.Now(), within: m.Within}
	if err := os.MkdirAll(run.dir, 0o700); err != nil {
		return nil, err.Error()
	}
	run.out = filepath.Join(run.dir, rig.RoleServer+".json")
	// Only what the daemon decides: where to listen, its own key, where
	// the result goes, no files of the driver's choosing.
	base = rig.RoleBase{Role: rig.RoleServer, Addr: net.JoinHostPort(host, strconv.Itoa(rig.ServerPort)),
		Transport: base.Transport, Out: run.out, Deadline: run.started.Add(m.Within)}
	base.Transport.Certificate = cert
	base.Transport.QlogDir = ""
	if err := completeSpec(spec, base); err != nil {
		os.RemoveAll(run.dir)
		return nil, err.Error()
	}
	cmd, ready, err := d.cfg.Env.StartServer(ctx, d.cfg.Namespace, rig.RoleServer, spec, run.dir)
	if err != nil {
		os.RemoveAll(run.dir)
		return nil, err.Error()
	}
	run.cmd, run.done = cmd, make(chan struct{})
	go func() { run.err = cmd.Wait(); close(run.done) }()
	if err := rig.WaitReady(ctx, ready, run.done, 15*time.Second); err != nil {
		rig.StopRole(run.cmd, run.done)
		tail := logTail(filepath.Join(run.dir, rig.RoleServer+".log"), 2048)
		run.stop()
		return nil, fmt.Sprintf("the server did not start listening: %v; the end of its log: %s", err, clip(tail, 2048))
	}
	d.log.Info("server listening", "run", m.Run, "addr", base.Addr)
	clientCert := cert.ClientOnly()
	if err := cc.send(ctlMsg{Op: "ready", Addr: base.Addr, Port: rig.ServerPort, Certificate: &clientCert}, remoteOpTimeout); err != nil {
		run.stop()
		return nil, err.Error()
	}
	return run, ""
}

// finish waits (20 s at most, as a run over a link does) for the server
// to end now that the client has, then sends its result and the end of its
// log.
func (d *Daemon) finish(cc *ctlConn, run *daemonRun) error {
	defer run.stop()
	select {
	case <-run.done:
	case <-time.After(20 * time.Second):
		d.log.Warn("server still running 20s after the client ended; stopping it", "run", run.name)
		rig.StopRole(run.cmd, run.done)
	}
	msg := ctlMsg{Op: "result", Log: logTail(filepath.Join(run.dir, rig.RoleServer+".log"), remoteLogTail)}
	if run.err != nil {
		msg.Exit = run.err.Error()
	}
	if res, err := rig.ReadResult[json.RawMessage](run.out); err == nil {
		msg.Result = res
	} else {
		msg.Why = "the server wrote no result: " + err.Error()
	}
	d.log.Info("run finished", "run", run.name, "exit", msg.Exit)
	return cc.send(msg, remoteOpTimeout)
}

// logTail is the last max bytes of the file at path, or a note that it
// cannot be read.
func logTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
			return "(log unreadable: " + err.Error() + ")"
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	return string(b)
}

// completeSpec sets spec's role base fields to base's, keeping the rest of
// the experiment's spec as the driver sent it.
func completeSpec(spec map[string]json.RawMessage, base rig.RoleBase) error {
	b, err := json.Marshal(base)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	maps.Copy(spec, fields)
	return nil
}
