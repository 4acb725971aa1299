package shapedlink

import (
	"context"
	"net"
	"os/exec"
)

// inProcess says the end is the in-process link's, not a namespace.
func (n *Namespace) inProcess() bool { return n.sim != nil }

// Role is "server", "client" or "shaper".
func (n *Namespace) Role() string { return n.role }

// String names the end, for logs: a namespace by role and inode.
func (n *Namespace) String() string {
	if n.sim != nil {
		return n.role + " (in process)"
	}
	return n.nsString()
}

// Inode is the namespace's inode number, as /proc/PID/ns/net shows it.
// The in-process link's ends have none.
func (n *Namespace) Inode() (uint64, error) {
	if n.sim != nil {
		return 0, n.sim.refuse("Inode", "it has no network namespace")
	}
	return n.nsInode()
}

// Do runs fn on an OS thread inside the namespace. Sockets fn creates stay
// in the namespace and may be used from any goroutine; goroutines fn
// starts do not run in it. At an in-process end Do fails without calling
// fn.
func (n *Namespace) Do(fn func() error) error {
	if n.sim != nil {
		return n.sim.refuse("Do", "it has no network namespace to run code in")
	}
	return n.nsDo(fn)
}

// Start starts cmd inside the namespace, in a PID namespace of its own
// under a small init (this program, re-executed), so that everything the
// command starts ends when the command exits, when cmd.Process.Kill is
// called, and when this process dies. SIGINT, SIGTERM, SIGHUP, SIGQUIT,
// SIGUSR1 and SIGUSR2 sent to cmd.Process reach the command.
//
// cmd.Process is the init; cmd.Wait and cmd.ProcessState report the
// command's status (128+S for a command killed by signal S). SysProcAttr
// applies to the init, whose Pdeathsig is always SIGKILL. The command
// stays in the caller's process group and sees the host's /proc, where
// its own PID is not its getpid (docs/shapedlink.md, "Commands in a
// namespace"). At an in-process end Start fails without starting cmd.
func (n *Namespace) Start(cmd *exec.Cmd) error {
	if n.sim != nil {
		return n.sim.refuse("Start", "it has no network namespace to start a process in")
	}
	return n.nsStart(cmd)
}

// Run starts cmd inside the namespace and waits for it.
func (n *Namespace) Run(cmd *exec.Cmd) error {
	if err := n.Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// Listen is net.Listen inside the namespace. Give an IP literal
// (Link.ServerAddr): names resolve inside the namespace, where only
// /etc/hosts answers. At an in-process end Listen fails.
func (n *Namespace) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	if n.sim != nil {
		return nil, n.sim.refuse("Listen", "it has no streams (TCP)")
	}
	return n.nsListen(ctx, network, address)
}

// ListenPacket is net.ListenPacket inside the namespace. At an in-process
// end it returns an in-process net.PacketConn on the end's address
// (network "udp" or "udp4"; port 0 for the next free one), whose
// datagrams cross the link to the other end's sockets.
func (n *Namespace) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	if n.sim != nil {
		return n.sim.listenPacket(network, address)
	}
	return n.nsListenPacket(ctx, network, address)
}

// DialContext is net.Dialer.DialContext inside the namespace, with the
// signature of http.Transport.DialContext and most dial hooks. Give an IP
// literal (Link.ServerAddr). At an in-process end DialContext fails.
func (n *Namespace) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if n.sim != nil {
		return nil, n.sim.refuse("DialContext", "it has no streams (TCP)")
	}
	return n.nsDialContext(ctx, network, address)
}
