// Package shapedlink builds the shaped link quicbench's experiments run
// on: a server and a client network namespace joined by a veth pair, each
// direction shaped to a Profile by kernel netem or, on kernels without
// sch_netem, by a userspace emulator; with segmentation offload pinned and
// read back, queue sampling, nftables counters on each end's egress hook,
// and a record of the host state. The same link can also be carried
// inside the process (BackendInProcess), on any system, in real time or in
// a testing/synctest bubble's virtual time.
//
// It knows nothing about QUIC, workloads or statistics; experiments
// compose it with those packages.
//
// # A minimal program
//
//	func main() {
//		if err := shapedlink.Reexec(); err != nil { // no-op as root
//			log.Fatal(err)
//		}
//		p, _ := shapedlink.ParseProfile("80:10:1")
//		link, err := shapedlink.New(ctx, p, shapedlink.Options{})
//		...
//		defer link.Close()
//		link.Server().Do(func() error { /* listen on link.ServerAddr() */ return nil })
//		link.Client().Start(exec.Command("./client", link.ServerAddr().String()))
//		samples, _ := link.Instruments().SampleQueue(runCtx, shapedlink.ServerEnd, 0)
//		if err := link.Err(); err != nil { /* discard the run */ }
//	}
//
// New builds the link and Close removes it; Err says whether it stayed
// intact (for the emulator, whether the shaper process still runs): check
// it after every run. Server and Client are the ends, at ServerAddr
// (198.18.0.1) and ClientAddr (198.18.0.2). Applied describes the shaping
// in force, one tc-like line per direction. Instruments groups what a
// bench reads (Sampler and SampleQueue, EgressCounters, HostState,
// ShaperStats, a schedule's AppliedChanges); Control what an experiment
// does to the path (BlockUDP, DropRandom, AddClientAddr,
// RemoveClientAddr). Package shapedlinktest wraps New for tests.
//
// # Running code at an end
//
// Namespace.Do runs a function on an OS thread inside the end's
// namespace; sockets it creates stay there. Namespace.Start starts a
// command there, in a PID namespace of its own that ends, with everything
// the command started, when the command does or this process dies.
// Namespace.Listen, ListenPacket and DialContext have the net package's
// signatures, so code that takes a dial hook runs over the link
// unchanged:
//
//	ln, _ := link.Server().Listen(ctx, "tcp", net.JoinHostPort(link.ServerAddr().String(), "8080"))
//	go http.Serve(ln, handler)
//	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
//
// On a link of wire-sized packets, a QUIC stack that sends with UDP GSO
// needs its socket wrapped with transport.WithoutGSO, or the link shapes
// each GSO batch as it arrives, not as a network would carry it.
//
// # Profiles
//
// A profile is rtt_ms:rate_mbit[:loss_pct][@limit_pkts], for example
// 80:10, 80:10:1 or 150:2:0.5: each direction is delayed by RTT/2, carried
// at the rate, loses loss_pct of its packets independently of the other,
// and holds at most the limit in packets, counted as netem counts them
// (the delay line included). The default limit is
// ceil(1.5 * rate * rtt / (8 * 1500)) + 10, 110 for 80:10.
//
// Options follow, each after a comma: [down.|up.]key=value, down being
// server to client; without a direction an option sets both. The keys are:
//
//	delay=MS                      one-way delay
//	jitter=MS[/DIST[/CORR]]       DIST uniform (default), normal, pareto, paretonormal
//	rate=MBIT                     Mbit/s
//	loss=PCT[/CORR]               random loss
//	loss=ge:p/r[/1-h[/1-k]]       Gilbert-Elliott loss (GE)
//	loss=state:p13[/p31[/p32[/p23[/p14]]]]
//	                              netem's 4-state loss (FourState)
//	limit=PKTS                    packet limit
//	dup=PCT[/CORR]                duplication
//	reorder=PCT[/CORR[/GAP]]      send packets at once, ahead of the delayed
//	corrupt=PCT[/CORR]            flip one bit, so the receiver drops the packet
//	qdisc=fifo|codel|fq_codel     queue discipline at the bottleneck
//	target=MS, interval=MS        CoDel's parameters
//	flows=N, quantum=BYTES        FQ-CoDel's parameters
//	ecn=on|off                    mark CE instead of dropping
//	schedule=SPEC                 timed changes (Schedule)
//	trace=SPEC                    a Mahimahi trace in place of the rate (Trace)
//	cross=NxKIND[+NxKIND...]      bulk flows beside the session (Cross)
//
// CORR is netem's correlation in percent. A time may end in "ms" and a
// percentage in "%". For example:
//
//	20:50,up.rate=5                    50 Mbit/s down, 5 up
//	80:10,loss=ge:0.3367/33.33         1% loss in bursts of 3 packets
//	80:10,jitter=5/normal/25           normal, sd 5 ms, 25% correlated
//	80:10,qdisc=fq_codel,ecn=on        FQ-CoDel with ECN at both bottlenecks
//	80:10,schedule=blackout:300ms/10s  300 ms of nothing every 10 s
//	80:10,down.cross=2xcubic           two cubic downloads beside the session
//
// ParseProfile reads a profile and String writes it back; a value that
// either backend would not apply as written is refused with the nearest
// values that would be. OptionsGrammar and OptionsHelp print the grammar;
// docs/link-description.md has it in full, with how each backend builds
// each option.
//
// # Backends
//
// Options.Backend chooses what shapes the link. BackendNetem puts a netem
// qdisc on each veth end (over tbf and codel or fq_codel for a queue
// discipline). BackendEmulator runs this same program, re-executed, as a
// shaper process in a third namespace between the ends. BackendAuto (the
// zero value) picks netem where the kernel has it and the profile allows,
// the emulator otherwise. BackendNone joins the ends unshaped, a baseline.
// BackendInProcess carries UDP datagrams between two in-process ends
// through the emulator's model, with no privilege, on any system; its
// other methods return errors wrapping errors.ErrUnsupported. Off Linux
// only BackendInProcess works.
//
// # Options
//
// Options.Seed seeds the link's random draws (netem's from Linux 6.6).
// Options.Offload is OffloadWire (the default: devices pinned to
// wire-sized packets, one per queue slot) or OffloadKeep (the kernel's
// offloads kept, for multi-gigabit links; the emulator still judges each
// wire segment). Options.Mode is the privilege mode, Options.Logger
// receives the decisions New makes, and Options.PacketTrace each
// datagram's steps through an in-process link.
//
// # Privilege
//
// As root New creates the namespaces directly (ModeRoot). Without root,
// call Reexec first thing in main: the process re-executes itself in a
// new user and network namespace, where New works the same way
// (ModeUnprivileged). Namespaces are held by descriptors only, so a
// process that dies leaves nothing behind. An importer's init functions
// run again in the re-executed process (also the emulator's), so they
// must not fail or print when run with no arguments.
//
// docs/shapedlink.md has the topologies, the offload modes, cleanup, the
// in-process link and the rules a profile's values follow.
package shapedlink
