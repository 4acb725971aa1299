package shapedlink

import (
	"context"
	"net"
	"os/exec"
)

// This file is an end's methods as a program sees them: each either works
// in the end's network namespace (namespace_linux.go, dial_linux.go) or,
// for the in-process link, in its in-process end (shaper_inproc.go),
// which makes UDP sockets and refuses the rest.

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

// Do runs fn on an OS thread that is inside the namespace for the duration
// of the call, then returns the thread to its original namespace. Sockets
// fn creates stay in the namespace for their whole life and may be used from
// any goroutine afterwards. fn must not start goroutines that expect to be
// in the namespace: they run on other threads. The in-process link's ends
// have no namespace: Do fails there without calling fn.
func (n *Namespace) Do(fn func() error) error {
	if n.sim != nil {
		return n.sim.refuse("Do", "it has no network namespace to run code in")
	}
	return n.nsDo(fn)
}

// Start starts cmd as a process inside the namespace, in a PID namespace
// of its own under a small init (this program, re-executed; see
// internal/proc.StartContained), so that everything the command starts,
// daemons included, ends with it and with this process:
//
//   - when the command exits, the init exits with its status and the
//     kernel kills whatever the command left running in its PID namespace;
//   - when this process dies, however it dies, the init gets SIGKILL (its
//     parent-death signal) and the kernel kills everything in the PID
//     namespace;
//   - SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to
//     cmd.Process are passed on to the command, and cmd.Process.Kill ends
//     the command and everything it started at once.
//
// cmd.Process is the init's process; cmd.Wait and cmd.ProcessState report
// the command's status, a command killed by signal S as exit status 128+S.
// SysProcAttr applies to the init; Pdeathsig is always SIGKILL. The
// command runs in the process group the init is started in: by default
// the caller's, which the init then leaves, so a terminal's keys and job
// control act on the command as on any child of the caller, and a signal
// to that group reaches it once. The command sees the
// host's /proc (there is no mount namespace): /proc/self is its own, but
// its PID, as getpid returns it, is one of its namespace, so it must not
// look itself up in /proc by number.
//
// The child is forked from a thread that is in the namespace at that
// moment, so it is born there and needs no setns of its own. That thread
// is the process's one permanent starter thread (package internal/proc),
// which then returns to its own namespace and never exits: the kernel sends
// a parent-death signal when the thread that forked the child exits, not
// when this process does, and any other thread may be ended by the Go
// runtime at any time. Wait for cmd as usual.
//
// The in-process link's ends have no namespace: Start fails there
// without starting cmd.
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

// Listen announces on address inside the namespace, as net.Listen does
// outside it: the listening socket is made in the namespace and stays
// there, and may be used from any goroutine. Give an IP literal
// (Link.ServerAddr, or ":0"): names are resolved inside the namespace,
// where only /etc/hosts answers. The in-process link carries datagrams
// only: Listen fails there.
func (n *Namespace) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	if n.sim != nil {
		return nil, n.sim.refuse("Listen", "it has no streams (TCP)")
	}
	return n.nsListen(ctx, network, address)
}

// ListenPacket is Listen for packet networks ("udp", "udp4", "udp6", ...),
// as net.ListenPacket. At an in-process end it returns an in-process
// net.PacketConn bound to the end's address (network "udp" or "udp4";
// address "host:port" with host the end's address or empty, port 0 for
// the next free one from 32768), whose datagrams cross the link to the
// sockets of the other end, by address and port.
func (n *Namespace) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	if n.sim != nil {
		return n.sim.listenPacket(network, address)
	}
	return n.nsListenPacket(ctx, network, address)
}

// DialContext connects to address from inside the namespace, as
// net.Dialer.DialContext does outside it; its signature is that of
// http.Transport.DialContext and of most clients' dial hooks, so a link's
// client end plugs in as it is:
//
//	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
//
// The socket is made in the namespace and stays there. Give an IP literal
// (Link.ServerAddr): names are resolved inside the namespace.
//
// The in-process link carries datagrams only: DialContext fails there.
func (n *Namespace) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if n.sim != nil {
		return nil, n.sim.refuse("DialContext", "it has no streams (TCP)")
	}
	return n.nsDialContext(ctx, network, address)
}
