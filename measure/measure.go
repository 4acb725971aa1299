package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// Sockets is where one end of a run makes its sockets, with the net
// package's signatures (shapedlink's Namespace methods have them). A nil
// hook makes that kind of socket with the net package, where the process
// is.
type Sockets struct {
	Listen       func(ctx context.Context, network, address string) (net.Listener, error)
	ListenPacket func(ctx context.Context, network, address string) (net.PacketConn, error)
	DialContext  func(ctx context.Context, network, address string) (net.Conn, error)
}

// Path is what a run crosses: where each end makes its sockets, the
// address the server listens on, and a check that the path held.
type Path struct {
	// ServerAddr is the "ip:port" the server listens on; port 0 picks a
	// free port.
	ServerAddr string
	// Server and Client make each end's sockets.
	Server, Client Sockets
	// Check, when set, is called once both ends are done; an error fails
	// the run (the path broke while it ran, so the figures are not the
	// path's).
	Check func() error
}

// OverLink is the path across link: the server in its server namespace,
// listening on its server address, the client in its client namespace,
// and the link's Err as the check (a shaper that died fails the run).
func OverLink(link *shapedlink.Link) Path {
	return Path{
		ServerAddr: net.JoinHostPort(link.ServerAddr().String(), "0"),
		Server:     Sockets{Listen: link.Server().Listen, ListenPacket: link.Server().ListenPacket, DialContext: link.Server().DialContext},
		Client:     Sockets{Listen: link.Client().Listen, ListenPacket: link.Client().ListenPacket, DialContext: link.Client().DialContext},
		Check:      link.Err,
	}
}

// Loopback is the path over 127.0.0.1 in this process's own network
// namespace: nothing shaped, for trying a workload or an arm out.
func Loopback() Path { return Path{ServerAddr: "127.0.0.1:0"} }

// Result is one run of one arm: what each end measured and had in force,
// and the run as the stats package takes it.
type Result struct {
	// Arm is the arm's name.
	Arm string `json:"arm"`
	// Client and Server are each end's workload result; nil when that
	// end did not get as far as running the workload.
	Client *spicelike.ClientResult `json:"client,omitempty"`
	Server *spicelike.ServerResult `json:"server,omitempty"`
	// ClientState and ServerState are what each end's session had in
	// force (ClientState.ConnectTime is the connect time), read when its
	// workload ended; nil when that end opened no session.
	ClientState *transport.State `json:"client_state,omitempty"`
	ServerState *transport.State `json:"server_state,omitempty"`
	// ServerError is why the server's end failed, if it did. It fails the
	// run only together with another cause: the client's result is the
	// measurement.
	ServerError string `json:"server_error,omitempty"`
	// Repeat is the client's samples, timeouts and bulk goodput, with
	// Failed set to the run's error when it failed: one element of the
	// []stats.Repeat that stats.SummariseCell takes.
	Repeat stats.Repeat `json:"repeat"`
}

// Run runs workload once over arm across path and returns both ends'
// results. The server and the client are goroutines of this process (see
// the package doc for what that means for timing). opts, at most one, are
// the transport options for both ends; Run fills in the rest (see
// PrepareOptions) and the socket hooks from path.
//
// The error says which end failed and why; Result.Repeat.Failed carries
// the same text, and whatever was measured is still in the Result. ctx
// bounds the whole run.
func Run(ctx context.Context, path Path, arm Arm, workload spicelike.Config, opts ...transport.Options) (Result, error) {
	var res Result
	if arm == "" {
		return res.finish(errors.New("measure: no arm given: use one of measure.ArmNames(), or measure.Lookup(name)"))
	}
	res.Arm = string(arm)
	so, co, err := options(path, arm, workload, opts)
	if err != nil {
		return res.finish(fmt.Errorf("measure: %w", err))
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ln, err := arm.Listen(runCtx, path.ServerAddr, so)
	if err != nil {
		return res.finish(fmt.Errorf("measure: %s server: listen on %s: %w", res.Arm, path.ServerAddr, err))
	}
	defer ln.Close()
	served := make(chan serverEnd, 1)
	go func() {
		var s serverEnd
		s.result, s.state, s.err = Serve(runCtx, ln, workload)
		served <- s
	}()

	var clientErr error
	res.Client, res.ClientState, clientErr = Client(runCtx, arm, ln.Addr().String(), co, workload)
	if clientErr != nil {
		// The client is gone: stop the server's accept or run rather
		// than let it wait out its timeouts.
		cancel()
	}
	s := waitServer(served, workload, cancel)
	res.Server, res.ServerState = s.result, s.state
	if s.err != nil {
		res.ServerError = s.err.Error()
	}
	var checkErr error
	if path.Check != nil {
		checkErr = path.Check()
	}
	return res.finish(runError(res.Arm, clientErr, checkErr, s.err))
}

// runError is why a run failed, or nil: the client's error and the path's
// check fail it; the server's error is added to explain a failure, never
// to cause one.
func runError(arm string, client, check, server error) error {
	var why []string
	if client != nil {
		why = append(why, "client: "+client.Error())
	}
	if check != nil {
		why = append(why, "the path broke during the run: "+check.Error())
	}
	if len(why) == 0 {
		return nil
	}
	if server != nil {
		why = append(why, "server: "+server.Error())
	}
	return fmt.Errorf("measure: the %s run failed: %s", arm, strings.Join(why, "; "))
}

// finish fills Repeat from the client's result and err, and returns both.
func (r *Result) finish(err error) (Result, error) {
	if c := r.Client; c != nil {
		r.Repeat = stats.Repeat{Samples: c.Samples, Timeouts: c.Timeouts, ThroughputMbit: c.BulkMbps}
	}
	if err != nil {
		r.Repeat.Failed = err.Error()
	}
	return *r, err
}

// Client is the client's end of one run: it dials arm at addr with o (see
// PrepareOptions), runs the client's side of w over the session's
// channels and closes the session once the workload has read everything,
// the first close of the run. The result and state are nil when it got no
// session; the error is the dial's, the workload's or a channel's.
func Client(ctx context.Context, arm Arm, addr string, o transport.Options, w spicelike.Config) (*spicelike.ClientResult, *transport.State, error) {
	sess, err := arm.Dial(ctx, addr, o)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer sess.Close()
	out, err := spicelike.RunClient(ctx, w, readWriters(sess.Channels()))
	st := sess.State()
	if err == nil {
		err = out.Err()
	}
	closeForExit(sess, &st)
	return &out, &st, err
}

// Serve is the server's end of one run: it accepts one session on ln, runs
// the server's side of w over it, and closes the session only once the
// client has closed it (or after w.Timeout): a QUIC close is immediate, so
// closing first would throw away what is still in flight, such as the
// echo of the client's end marker. It does not close ln.
func Serve(ctx context.Context, ln ArmListener, w spicelike.Config) (*spicelike.ServerResult, *transport.State, error) {
	sess, err := ln.Accept(ctx)
	if err != nil {
		if ctx.Err() != nil { // the client failed first, and says why
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("accept: %w", err)
	}
	defer sess.Close()
	chs := sess.Channels()
	res, err := spicelike.RunServer(ctx, w, readWriters(chs))
	st := sess.State()
	if err == nil {
		err = res.Err()
	}
	if len(chs) > 0 {
		WaitPeerClose(chs[0], w.Timeout)
	}
	closeForExit(sess, &st)
	return &res, &st, err
}

// serverEnd is what the server's goroutine reports.
type serverEnd struct {
	result *spicelike.ServerResult
	state  *transport.State
	err    error
}

// WaitPeerClose reads ch until the peer closes it, or for at most timeout
// when ch has SetReadDeadline. A server calls it before closing a session.
func WaitPeerClose(ch io.Reader, timeout time.Duration) {
	if d, ok := ch.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now().Add(timeout))
	}
	_, _ = io.Copy(io.Discard, ch)
}

func readWriters(chs []io.ReadWriteCloser) []io.ReadWriter {
	out := make([]io.ReadWriter, len(chs))
	for i, c := range chs {
		out[i] = c
	}
	return out
}

// waitServer waits for the server's goroutine. Once the client has ended,
// the server needs at most its closing exchange and the wait for the
// client's close (each bounded by the workload's Timeout); past that it is
// cancelled, and says so.
func waitServer(served <-chan serverEnd, w spicelike.Config, cancel context.CancelFunc) serverEnd {
	grace := 2*w.Timeout + 5*time.Second
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case s := <-served:
		return s
	case <-t.C:
	}
	cancel()
	s := <-served
	s.err = errors.Join(s.err, fmt.Errorf("still running %v after the client ended; cancelled", grace))
	return s
}

// options are the server's and the client's transport options for a run
// across path, from the caller's (at most one) and what the run needs.
func options(path Path, arm Arm, w spicelike.Config, opts []transport.Options) (server, client transport.Options, err error) {
	if len(opts) > 1 {
		return server, client, fmt.Errorf("give at most one transport.Options, got %d", len(opts))
	}
	if path.ServerAddr == "" {
		return server, client, errors.New("Path.ServerAddr is empty: use OverLink(link) or Loopback(), " +
			"or set the ip:port the server listens on (port 0 picks one)")
	}
	var o transport.Options
	if len(opts) == 1 {
		o = opts[0]
	}
	if o.Listen != nil || o.ListenPacket != nil || o.DialContext != nil {
		return server, client, errors.New("transport.Options has socket hooks set: Run takes each end's sockets from the Path " +
			"(Path.Server and Path.Client), so set them there and leave Options.Listen, ListenPacket and DialContext nil")
	}
	if server, client, err = PrepareOptions(arm, w, o); err != nil {
		return server, client, err
	}
	server.Listen, server.ListenPacket, server.DialContext = path.Server.Listen, path.Server.ListenPacket, path.Server.DialContext
	client.Listen, client.ListenPacket, client.DialContext = path.Client.Listen, path.Client.ListenPacket, path.Client.DialContext
	return server, client, nil
}
