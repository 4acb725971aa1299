package rig

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
	// The links built here may carry QUIC cross flows.
	_ "github.com/shakenfist/quicbench/shapedlink/quiccross"
)

// The names of a run's two roles: their specs, logs and results are
// <role>-spec.json, <role>.log and <role>.json in the run's directory.
const (
	RoleServer = "server"
	RoleClient = "client"
)

// ServerPort is where every run's server listens, inside its namespace
// (QUIC on UDP and TCP alike).
const ServerPort = 4433

// rig is the stage of one run: a fresh link, and the run's server and
// client, each this binary re-executed as one of env's roles inside its end
// of the link, with their specs, logs and results in Dir. Close takes it
// all down.
type rig struct {
	Link *shapedlink.Link
	Dir  string
	// Addr is where the server listens: its end's address, ServerPort.
	Addr string

	profile shapedlink.Profile
	offload shapedlink.OffloadMode
	env     RoleEnv
	srv     *exec.Cmd
	srvDone chan struct{} // closed when the server has exited
	srvErr  error         // its exit status, once srvDone is closed
}

// newRig builds the link for profile p.
func newRig(ctx context.Context, env RoleEnv, dir string, p shapedlink.Profile, o shapedlink.Options) (*rig, error) {
	l, err := shapedlink.New(ctx, p, o)
	if err != nil {
		return nil, fmt.Errorf("building the link: %w", err)
	}
	if p.Marks() {
		// The link marks instead of dropping: let kernel TCP ask for ECN
		// as quic-go does, in both namespaces, so every arm can use the
		// marks (the kernel's default, 2, only answers). The host record
		// says what was in force.
		for _, ns := range []*shapedlink.Namespace{l.Server(), l.Client()} {
			if err := ns.Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/tcp_ecn", []byte("1"), 0) }); err != nil {
				l.Close()
				return nil, fmt.Errorf("pinning net.ipv4.tcp_ecn to 1 in the %s namespace for a marking link: %w", ns.Role(), err)
			}
		}
	}
	addr := net.JoinHostPort(l.ServerAddr().String(), strconv.Itoa(ServerPort))
	return &rig{Link: l, Dir: dir, Addr: addr, profile: p, offload: o.Offload, env: env}, nil
}

// Close stops the server if it still runs and removes the link.
func (r *rig) Close() {
	r.StopServer()
	r.Link.Close()
}

// LinkRecord describes the link for a record: its offload mode only when
// its ends keep their offloads, so a wire-sized link's record is what it
// always was.
func (r *rig) LinkRecord() results.Link {
	return results.Link{Backend: string(r.Link.Backend()), Applied: r.Link.Applied(), Limit: r.profile.Direction(shapedlink.Down).Limit,
		Offload: string(r.offload)}
}

// HostRecord is the host's state as JSON for a record; the emulator's
// seed, if there is one, goes into l.
func (r *rig) HostRecord(l *results.Link) (json.RawMessage, error) {
	hs, err := r.Link.Instruments().HostState()
	if err != nil {
		return nil, err
	}
	if len(hs.EmulatorSeeds) > 0 {
		l.Seed = hs.EmulatorSeeds[0]
	}
	b, _ := json.Marshal(hs)
	return b, nil
}

// RoleBase is what every role's spec holds; a command's spec embeds it
// and adds what its roles need.
type RoleBase struct {
	Role      string            `json:"role"`
	Addr      string            `json:"addr"`
	Transport transport.Options `json:"transport"`
	// Out is where the process writes its result.
	Out string `json:"out"`
	// Deadline bounds the whole process.
	Deadline time.Time `json:"deadline"`
}

// roleDeadline bounds the role's whole process.
func (b RoleBase) roleDeadline() time.Time { return b.Deadline }

// resultPath is where the role writes its result.
func (b RoleBase) resultPath() string { return b.Out }

// RoleBases are the server's and the client's RoleBase for this run, with
// transport options o and a new certificate for the server's address: all
// of it in the server's options, the client's part in the client's.
func (r *rig) RoleBases(o transport.Options, deadline time.Time) (server, client RoleBase, err error) {
	cert, err := transport.NewCertificate(r.Link.ServerAddr().String())
	if err != nil {
		return server, client, err
	}
	server = RoleBase{Role: RoleServer, Addr: r.Addr, Transport: o, Out: r.resultPath(RoleServer), Deadline: deadline}
	server.Transport.Certificate = cert
	client = server
	client.Role, client.Out = RoleClient, r.resultPath(RoleClient)
	client.Transport.Certificate = cert.ClientOnly()
	return server, client, nil
}

// resultPath is where role writes its result.
func (r *rig) resultPath(role string) string { return filepath.Join(r.Dir, role+".json") }

// LogPath is where role's output goes.
func (r *rig) LogPath(role string) string { return filepath.Join(r.Dir, role+".log") }

// StartServer starts the server in the server's namespace and waits (15 s
// at most) until it says it is listening; the server must call
// SignalReady. Whatever happens, Close or StopServer ends it.
func (r *rig) StartServer(ctx context.Context, spec any) error {
	srv, ready, err := r.env.StartServer(ctx, r.Link.Server(), RoleServer, spec, r.Dir)
	if err != nil {
		return err
	}
	r.srv, r.srvDone = srv, make(chan struct{})
	go func() { r.srvErr = srv.Wait(); close(r.srvDone) }()
	if err := WaitReady(ctx, ready, r.srvDone, 15*time.Second); err != nil {
		return fmt.Errorf("server did not start listening (see %s): %w", r.LogPath(RoleServer), err)
	}
	return nil
}

// StopServer ends the server if it still runs: SIGTERM, on which a role
// writes what it has, then SIGKILL 5 s later.
func (r *rig) StopServer() {
	if r.srv != nil {
		StopRole(r.srv, r.srvDone)
	}
}

// StartClient starts the client in the client's namespace, with extra as
// its descriptors 3, 4, ... (close your copies after StartClient). Wait
// for it with the returned command's Wait.
func (r *rig) StartClient(ctx context.Context, spec any, extra ...*os.File) (*exec.Cmd, error) {
	return r.env.Start(ctx, r.Link.Client(), RoleClient, spec, r.Dir, extra...)
}

// WaitReady waits for a server's readiness line on ready (closing it),
// until the server exits, timeout passes or ctx ends.
func WaitReady(ctx context.Context, ready *os.File, exited <-chan struct{}, timeout time.Duration) error {
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
