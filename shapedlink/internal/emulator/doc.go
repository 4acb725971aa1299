// Package emulator is shapedlink's userspace link emulator: a process that
// forwards Ethernet frames between two interfaces with netem's semantics,
// for kernels that have no sch_netem (minimal cloud, VM and CI kernels).
//
// It is internal to shapedlink. Code that wants a shaped link uses
// shapedlink.New, which picks netem or this emulator and records which.
// docs/shapedlink.md ("The emulator, beside netem") has how it matches
// netem and where it differs, how it keeps time, and what it measured.
//
// # Where it sits
//
//	server ns            shaper ns                           client ns
//	 [veth] ======= [IfA]  ->  AToB  ->  [IfB] ======= [veth]
//	                [IfA]  <-  BToA  <-  [IfB]
//
// The shaper reads every frame that arrives on IfA with an AF_PACKET
// socket, applies the AToB direction, and writes the frame unchanged to
// IfB; BToA is the mirror. Frames are forwarded as a bridge would, so the
// two outer namespaces see one Ethernet segment. Each direction is package
// linkmodel's model run on the configuration's linkspec.Direction, on a
// locked OS thread of its own. With Config.KeepOffload a super-packet is
// judged per wire segment (package segment) and sent on as runs of
// segments; Config.DepartureWindow lets a run leave up to the window early.
//
// # Using it (for shapedlink)
//
//	func init() { emulator.MaybeServe() } // becomes the shaper if re-executed as one
//
//	cmd, mon, err := emulator.Command(cfg)
//	// start cmd from the permanent starter thread, inside the shaper
//	// network namespace: the child is born there and never calls setns.
//	err = proc.StartInNetns(cmd, shaperNetnsFD)
//	err = mon.Ready(ctx)   // sockets open, forwarding
//	...
//	st := mon.Snapshot()   // [0] is AToB, [1] is BToA
//	err = mon.Stop()       // SIGTERM, wait; the monitor owns cmd.Wait
//
// Command re-executes /proc/self/exe with the variable envConfig set, the
// configuration as JSON in a memfd (descriptor 4), a shared-memory page of
// counters (descriptor 3, read by Monitor without system calls), and a
// pipe as standard input. The shaper exits on SIGTERM or SIGINT, on end of
// file on standard input, and by PR_SET_PDEATHSIG when the thread that
// started it exits: so start it from a thread that never exits, as
// proc.StartInNetns does (shapedlink's Namespace.Start uses it).
//
// Do not call cmd.Wait: Monitor.Ready and Monitor.Stop wait for the
// process. Monitor does not set Stdout; Stderr is captured (its tail
// appears in errors) unless the caller sets cmd.Stderr before Start.
// Ready returns once both interfaces are up with carrier and both sockets
// are bound, or the shaper's own error if it fails first.
// Monitor.Describe gives one tc-like line per direction, with the seeds;
// Monitor.Priority says how the shaper is scheduled (SCHED_FIFO 1 where
// it may be).
//
// The shaper needs only CAP_NET_RAW in its network namespace, so it runs
// in shapedlink's unprivileged mode too, without SCHED_FIFO and with
// receive buffers capped at net.core.rmem_max; Monitor.Priority and
// linkspec.Counters (SocketDrops, RcvBufBytes) show both.
package emulator
