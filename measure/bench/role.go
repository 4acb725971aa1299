package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/rig"

	"golang.org/x/sys/unix"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// The server and client of a run are the example binary itself, re-executed
// inside the server and client namespaces with these variables set. Keeping
// them in separate processes means one end's garbage collection or bulk work
// cannot stall the other's measurement.
const (
	envRole = "QUICBENCH_ROLE" // "server" or "client"
	envSpec = "QUICBENCH_SPEC" // path to the roleSpec JSON
)

// roleSpec is what a server or client process is told to do.
type roleSpec struct {
	rig.RoleBase
	Arm      measure.Arm      `json:"arm"`
	Workload spicelike.Config `json:"workload"`
	// Sessions is how many sessions the server accepts and the client
	// dials, all run at once; 0 or 1 is one.
	Sessions int `json:"sessions,omitempty"`
}

// roleResult is what a server or client process reports.
type roleResult struct {
	Role  string         `json:"role"`
	Err   string         `json:"error,omitempty"`
	Usage *results.Usage `json:"usage,omitempty"`
	// Sessions is every session's result, one for a run of one session.
	Sessions []roleSession `json:"sessions,omitempty"`
}

// first is session 0's result, or none.
func (r roleResult) first() roleSession {
	if len(r.Sessions) == 0 {
		return roleSession{}
	}
	return r.Sessions[0]
}

// roleSession is one session's part of a roleResult.
type roleSession struct {
	Client *spicelike.ClientResult `json:"client,omitempty"`
	Server *spicelike.ServerResult `json:"server,omitempty"`
	State  *transport.State        `json:"state,omitempty"`
}

// MaybeRunRole must be called first thing in an example's main. In a process
// started as a run's server or client it does that job and exits; otherwise
// it returns at once.
func MaybeRunRole() {
	rig.ServeRole(benchRoles, map[string]func(context.Context, roleSpec, *slog.Logger) (roleResult, error){
		rig.RoleServer: func(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
			if spec.Sessions > 1 {
				return runServers(ctx, spec, log)
			}
			return runServer(ctx, spec, log)
		},
		rig.RoleClient: func(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
			if spec.Sessions > 1 {
				return runClients(ctx, spec, log)
			}
			return runClient(ctx, spec, log)
		},
	}, func(role string, res *roleResult, err error, log *slog.Logger) {
		res.Role = role
		res.Usage = selfUsage()
		if err != nil {
			res.Err = err.Error()
			log.Error("run failed", "err", err)
		}
	})
}

// selfUsage reads this process's CPU time and peak RSS so far. The peak
// comes from VmHWM in /proc/self/status, not getrusage: Linux carries the
// forked child's pre-exec high-water mark (a copy of the orchestrator's
// memory) into ru_maxrss across execve, so it would report the parent's.
func selfUsage() *results.Usage {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return nil
	}
	u := &results.Usage{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		u.MaxRSSKiB = vmHWM(string(b))
	}
	return u
}

// vmHWM returns the VmHWM line's value in KiB from a /proc/PID/status
// text, or 0.
func vmHWM(status string) int64 {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib); err == nil {
				return kib
			}
		}
	}
	return 0
}

func runServer(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
	res := roleResult{}
	ln, err := listenArm(ctx, spec.Arm, spec.Addr, spec.Transport)
	if err != nil {
		return res, err
	}
	defer ln.Close()
	log.Info("listening", "arm", spec.Arm, "addr", ln.Addr().String())
	out, st, err := measure.Serve(ctx, ln, spec.Workload)
	if out != nil {
		log.Info("done", "bulk_bytes", out.BulkBytesWritten, "echoes", out.Echoes)
	}
	if err == nil && out == nil {
		err = ctx.Err()
	}
	if out != nil || st != nil {
		res.Sessions = []roleSession{{Server: out, State: st}}
	}
	return res, err
}

func runClient(ctx context.Context, spec roleSpec, log *slog.Logger) (roleResult, error) {
	res := roleResult{}
	arm, err := measure.Lookup(string(spec.Arm))
	if err != nil {
		return res, err
	}
	out, st, err := measure.Client(ctx, arm, spec.Addr, spec.Transport, spec.Workload)
	if out != nil {
		log.Info("done", "arm", spec.Arm, "connect_time", st.ConnectTime, "samples", len(out.Samples),
			"timeouts", out.Timeouts, "bulk_mbps", out.BulkMbps)
	}
	if out != nil || st != nil {
		res.Sessions = []roleSession{{Client: out, State: st}}
	}
	return res, err
}

func readWriters(chs []io.ReadWriteCloser) []io.ReadWriter {
	out := make([]io.ReadWriter, len(chs))
	for i, c := range chs {
		out[i] = c
	}
	return out
}

// listenArm listens for the registered arm named arm on addr and tells the
// orchestrator so (rig.SignalReady): how a run's server starts.
func listenArm(ctx context.Context, arm measure.Arm, addr string, o transport.Options) (measure.ArmListener, error) {
	a, err := measure.Lookup(string(arm))
	if err != nil {
		return nil, err
	}
	ln, err := a.Listen(ctx, addr, o)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	rig.SignalReady(ln.Addr())
	return ln, nil
}

// benchRoles is the matrix's pair of role variables.
var benchRoles = rig.RoleEnv{Role: envRole, Spec: envSpec}
