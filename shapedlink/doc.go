// Package shapedlink builds the shaped link every quicbench experiment runs
// on: a server and a client network namespace joined by a veth pair, shaped
// to a profile (round trip, rate, loss, queue limit) by kernel netem or, on
// kernels without sch_netem, by a userspace emulator; with segmentation
// offload pinned off and read back, queue sampling, nftables filters and
// counters on each end's egress hook, and a record of the host state. The
// same link can also be carried inside the process (BackendInProcess), on
// any system, in real time or in a testing/synctest bubble's virtual time;
// see "In process".
//
// It knows nothing about QUIC, workloads or statistics; experiments compose
// it with those packages.
//
// # Profiles
//
// A profile is written rtt_ms:rate_mbit[:loss_pct], for example 80:10,
// 80:10:1 or 150:2:0.5, optionally followed by @limit_pkts. Each direction
// is delayed by RTT/2, carried at the rate, loses loss_pct of its packets
// independently of the other direction, and holds at most the limit in
// packets, counted as netem counts them (packets in the delay line
// included). The default limit is ceil(1.5 * rate * rtt / (8 * 1500)) + 10,
// 110 for 80:10. A profile without loss is shaped with no loss term at all.
//
// Options after the short form, each after a comma, set one direction
// apart from the other: [down.|up.]key=value, where down is server to
// client, up is client to server, and an option without a direction sets
// both. The keys are:
//
//	delay=MS                      one-way delay (the short form gives RTT/2)
//	jitter=MS[/DIST[/CORR]]       netem's "delay D J [CORR] [distribution DIST]":
//	                              uniform on D-J to D+J, or with DIST one of
//	                              normal, pareto, paretonormal, D plus J times
//	                              a draw from that table (J the standard
//	                              deviation, the tables stopping at 4 sigma)
//	rate=MBIT                     Mbit/s
//	loss=PCT[/CORR]               independent (or netem-correlated) loss
//	loss=ge:p/r[/1-h[/1-k]]       netem's Gilbert-Elliott model, see GE
//	loss=state:p13[/p31[/p32[/p23[/p14]]]]
//	                              netem's 4-state model, see FourState
//	limit=PKTS                    packet limit
//	dup=PCT[/CORR]                duplication; the copy may be lost too
//	reorder=PCT[/CORR[/GAP]]      after GAP-1 (default 0) packets delayed
//	                              normally, send each packet at once with
//	                              probability PCT, ahead of the delayed ones
//	corrupt=PCT[/CORR]            netem's corruption: one random bit of a
//	                              packet flipped, its checksum made complete
//	                              first, so the receiver drops it
//	qdisc=fifo|codel|fq_codel     the queue discipline of the packets waiting
//	                              for the rate (fifo: netem's drop-tail, the
//	                              default); with codel or fq_codel, limit is
//	                              the discipline's (default 1000 or 10240)
//	target=MS, interval=MS        CoDel's (default 5 and 100)
//	flows=N, quantum=BYTES        FQ-CoDel's (default 1024 and 1514)
//	ecn=on|off                    mark ECN-capable packets CE instead of
//	                              dropping them (default off, for both)
//	schedule=SPEC                 timed changes while the link runs: a
//	                              generator (blackout:DUR/EVERY[/hold],
//	                              step:HI/LO/DUR/EVERY) or a JSON file; see
//	                              Schedule (emulator)
//	trace=SPEC                    a Mahimahi trace in place of the rate: a
//	                              file, or a generator (const:MBIT,
//	                              cell:MBIT/CV[/SEED]); see Trace (emulator)
//
// CORR is netem's correlation in percent: each draw is mixed with the
// previous one. As in netem, that clusters events but also changes the
// marginal: a correlated 10% loss loses fewer than 10% of packets (the
// emulator runs netem's own generator, so the two backends agree).
// Since every profile has a rate, jitter never reorders (a packet never
// leaves before the one ahead of it, as in netem); reorder does.
//
// Every field in milliseconds may end in "ms" and every percentage in "%"
// (80:10,jitter=5ms/normal is 80:10,jitter=5/normal, and
// 80:10,loss=ge:1%/30% is 80:10,loss=ge:1/30); String writes neither.
//
//	20:50,up.rate=5                    50 Mbit/s down, 5 up, 10 ms each way
//	80:10,down.delay=60,up.delay=20    80 ms round trip, split 60/20
//	80:10:1,up.loss=0                  1% loss down only
//	80:10,loss=ge:0.3367/33.33         1% loss in bursts of 3 packets
//	80:10,loss=state:0.2/25/0/100/0.8  1.6% loss: bursts of 4 on average
//	                                   begun at 0.2% of packets, and isolated
//	                                   losses at 0.8%
//	80:10,down.jitter=5                down delay 35-45 ms, uniform
//	80:10,jitter=5/normal/25           normal, sd 5 ms, 25% correlated
//	80:10,dup=1,down.reorder=2/0/10    1% duplicated; every 10th packet down
//	                                   sent early with probability 2%
//	80:10,qdisc=fq_codel,ecn=on        FQ-CoDel with ECN at both bottlenecks
//	80:10,schedule=blackout:300ms/10s  300 ms of nothing every 10 s
//	80:10,down.trace=cell:10/0.5       a cellular-like down rate, mean 10
//
// A queue discipline manages the packets waiting for the rate. The
// emulator implements it (package aqm under internal, from RFC 8289 and
// RFC 8290, flows hashed by 5-tuple), with sojourn time measured from
// arrival to the start of serialisation and the delay after
// serialisation. On netem, whose own rate queues packets inside netem
// where no child qdisc could manage them, the rate moves to a tbf under
// netem and the kernel's codel or fq_codel sits under tbf, so the queue
// builds in the discipline:
//
//	netem 1: (delay, loss, no rate) -> tbf 2: (rate) -> codel|fq_codel 3:
//
// There the delay line comes before the queue: the same timing for a
// fixed delay, but jittered packets would reach the queue out of order,
// so jitter beside a discipline is built by the emulator and the
// in-process link, not netem (a profile with both picks the emulator
// when the backend is left to choose; the netem backend refuses it,
// saying why). A discipline is not combined with dup
// or reorder. Instruments().ShaperStats counts the emulator's drops by cause and its CE
// marks; behind FQ-CoDel its queue samples carry the fullest flow queues
// (QueueSample.Flows). The netem sampler reads the discipline's qdisc.
//
// Options.Seed seeds every random draw of the emulator, and netem's on
// kernels with TCA_NETEM_PRNG_SEED (Linux 6.6 and later); the applied
// lines and Instruments().HostState say which seeds were in force, or that this
// kernel's netem cannot be seeded.
//
// Both backends apply every option. On netem, the delay and jitter in
// nanoseconds (TCA_NETEM_LATENCY64, TCA_NETEM_JITTER64), the
// Gilbert-Elliott model (TCA_NETEM_LOSS) and the distribution table
// (TCA_NETEM_DELAY_DIST, generated from the distributions' mathematics,
// see the emulator's package disttable) are written by this package;
// everything is read back into the applied line except the table, which
// the kernel does not report (the line says so).
//
// A profile holds only values that both backends apply as written, so
// what a run is labelled is what the link did: a rate is a whole number of
// bytes per second (netem's unit), a time a whole number of microseconds
// (for rtt_ms, each direction's half), a non-zero percentage at least
// MinPct. Anything else is refused, the error naming the nearest values
// that are applied: 80:0.0000001 (0.0125 bytes per second, which netem
// would round to no rate limit at all) says to use 0.000008, and 80.001:10
// (40.0005 ms each way) an even number of microseconds. So are options of
// which one would be ignored or which describe no link: a Gilbert-Elliott
// model whose mean loss is 100% (refused as 80:10:100 is), a rate beside
// a trace in the same direction (80:10,trace=const:5,rate=3: the trace is
// the rate), a schedule that changes what a trace or the Gilbert-Elliott
// model replaces or has no change for a direction it is given to, and a
// correlation, distribution or gap of a process at 0%. An error names the
// field or option, its value and what is wrong, and points at
// OptionsGrammar.
//
// A direction whose rate or delay differs from the short form gets the
// default limit of its own rate and twice its own delay, unless the short
// form names a limit or the direction its own. Profile.Direction resolves
// a direction; String writes options back in a fixed order, so a profile
// round-trips. A profile without options is applied exactly as before
// options existed. docs/link-description.md has the design of the options
// and how each backend builds them.
//
// # Topology
//
// With kernel netem (BackendNetem), one netem qdisc on each veth end:
//
//	        server ns                                    client ns
//	+------------------------+                  +------------------------+
//	| 198.18.0.1      qbsrv0 |------------------| qbcli0      198.18.0.2 |
//	| netem: delay RTT/2,    |       veth       | netem: delay RTT/2,    |
//	| rate, limit, loss      |                  | rate, limit, loss      |
//	+------------------------+                  +------------------------+
//	 shapes server -> client                     shapes client -> server
//
// With the emulator (BackendEmulator), a third namespace holds the shaper
// process, which forwards Ethernet frames between its two veth ends with
// netem's semantics (see package internal/emulator for the model):
//
//	   server ns                   shaper ns (emulator)                  client ns
//	+--------------+      +------------------------------------+      +--------------+
//	| 198.18.0.1   |      |   -> loss, limit, rate, delay ->   |      |   198.18.0.2 |
//	|      qbsrv0  |------| qbshs0                      qbshc0 |------|  qbcli0      |
//	|              |      |   <- loss, limit, rate, delay <-   |      |              |
//	+--------------+      +------------------------------------+      +--------------+
//	                 veth                                        veth
//
// BackendNone is the first topology without the netem qdiscs: the same
// two ends joined directly and nothing shaped, the baseline against which
// a calibration measures what a shaped link adds.
//
// The outer ends are identical in every topology: same names, addresses,
// MTU 1500, offload settings, permanent neighbour entries (no ARP crosses
// the link) and IPv6 off, so code using a Link sees no difference except
// Backend. Every veth end gets GSO max segs 1 and GSO max size 1500 through
// netlink and TSO, GSO, GRO and tx checksumming off through ethtool ioctls,
// all read back (Instruments().Offload); GSO max segs 1 is what brings TCP down to
// wire-sized packets before the qdisc. Tx checksumming is off so that every
// frame leaves its sender with a complete checksum; UDP_SEGMENT still
// works (the device segments and checksums in software). That is the
// default, OffloadWire: every queue and counter then sees one wire packet
// per slot, which the bench's offload evidence (package gsocheck) reads.
//
// Wire-sized packets cost the ends' stacks a system's worth of CPU per
// packet, and a link of them stops near half a gigabit on a small machine.
// Options.Offload = OffloadKeep leaves the ends' offloads as the kernel
// sets them (TSO, GSO, checksum offload), so senders hand over 64 KiB
// super-packets as on a host. The emulator still judges every wire segment
// of a super-packet on its own, with the same draws a wire-sized run of the
// same arrivals gets, and sends consecutive segments due together as one
// smaller super-packet (see the emulator's package doc), so the link shapes
// per segment at multi-gigabit rates; docs/calibration.md has the figures.
// netem, as the kernel's, judges a super-packet as one packet (one loss
// draw, one place against the limit, one rate debit for the whole), and
// says so in its applied line; use the emulator backend for per-segment
// semantics. The emulator cuts TCP and UDP (UDP_SEGMENT) super-packets of
// IPv4 and IPv6; an emulated link keeping offloads turns off at the ends
// the segmentation offloads of what it cannot cut (tunnels such as VXLAN
// and GRE, IP-in-IP, GSO partial, SCTP, ESP, fraglist), so the stacks
// segment those in software, and records them read back
// (Offload.UncutSegmentation). A super-packet it still cannot cut (an
// in-band VLAN tag, an IPv6 extension header) is judged whole, as one
// segment, and counted (ShaperCounters.JudgedWhole). Before Linux 6.2 a
// packet socket cannot read a UDP GSO super-packet, so on such kernels an
// emulated link keeping offloads turns UDP segmentation offload off at
// the ends too, and its applied line says so. examples/overlink keeps offloads
// by default; the bench's commands and shapedlinktest use wire-sized
// packets unless asked.
//
// To move the client to a new address mid-run (a path change),
// Control().AddClientAddr
// gives the client end a further address in the /24, with the same kind of
// permanent neighbour entry on the server end, and RemoveClientAddr takes
// the old one off the link; ClientAddrs lists what the client has now.
//
// Everything is done in Go through netlink, nftables and ioctls; no ip, tc,
// ethtool or nft binary is run.
//
// # Privilege and cleanup
//
// Namespaces are held by file descriptors only, never named under
// /run/netns, and the veth pairs and nftables tables are created inside
// them (nothing appears in the host's namespace). So a process that dies
// for any reason leaves nothing behind: its namespaces, veths and tables
// go with its descriptors, the emulator's shaper process is killed by the
// kernel when its parent dies (PR_SET_PDEATHSIG), and so is every command
// started with Namespace.Start, with everything that command started (see
// below). Close removes everything at once.
//
// What this does not cover: a process started in one of the namespaces by
// other means than Namespace.Start (a fork from inside Do, say) is the
// caller's to end, as is a program a namespace descriptor was handed to;
// and what a command asks something outside its namespaces to start for
// it (a service manager reached through a Unix socket on the file system,
// say) is not the command's and lives on.
//
// As root (ModeRoot) New creates the namespaces directly. Without root,
// call Reexec first thing in main: the process re-executes itself inside a
// new user and network namespace (as `unshare -rn` does), where it is root
// of its own namespaces and New works the same way (ModeUnprivileged). If
// user namespaces are disabled, Reexec's error names the sysctl or AppArmor
// setting responsible.
//
// # Running code in a namespace
//
// Namespace.Do runs a function on an OS thread that is inside the
// namespace; sockets it creates stay there. Namespace.Start starts a
// command inside it (for a separate process such as a benchmark client,
// or any program: a shell script, a server that daemonises).
//
// A command started that way runs in a PID namespace of its own, under a
// small init that is this program re-executed (the same way as the
// emulator, below). The init dies with this process (its parent-death
// signal is SIGKILL, and it is forked from one OS thread that lives as
// long as the process: the kernel sends that signal when the thread that
// forked the child exits, and the Go runtime ends any other thread
// whenever a goroutine finishes while locked to it). It passes SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 on to the command, reaps
// the orphans, and exits with the command's status (128+S for a command
// killed by signal S). When the init exits, the kernel kills everything
// left in its PID namespace. So the command's children, a shell wrapper's
// pipeline, a server that detached itself into a session of its own: all
// end when the command does, when cmd.Process.Kill is called, and when
// this process dies, even by SIGKILL; none is left holding a namespace.
// The command stays in the caller's process group (the init leaves it), so
// a terminal's keys and job control act on it as on any other child. The
// namespace has no mount namespace of its own, so /proc is the host's:
// /proc/self is right, but a command that looks up its own getpid() in
// /proc finds another process.
//
// # Embedding the link under other code
//
// Namespace.Listen, ListenPacket and DialContext make sockets inside a
// namespace with the signatures of the net package, so code that takes a
// dial hook runs over the link unchanged:
//
//	ln, _ := link.Server().Listen(ctx, "tcp", net.JoinHostPort(link.ServerAddr().String(), "8080"))
//	go http.Serve(ln, handler)
//	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
//	resp, err := client.Get("http://198.18.0.1:8080/")
//
// New logs nothing unless Options.Logger is set. Package shapedlinktest
// wraps New for tests (skips where links cannot be built, closes the link
// at the end, fails the test if the link broke during it).
//
// A QUIC stack of the embedder's own needs one more step on a link of
// wire-sized packets. quic-go on Linux sends with UDP segmentation offload
// (GSO): one write of up to 64 datagrams leaves the socket as one
// super-packet, which netem queues, delays and loses as one packet (the
// emulator gets it already cut into wire packets, but all at once), so the
// link no longer shapes what a network would carry. (On an emulated link
// that keeps offloads, GSO is fine: each datagram is judged on its own.)
// Wrap the socket before quic-go sees it; the transport package's wrapper
// turns GSO off for that socket only and keeps ECN and batched receive:
//
//	pc, err := link.Server().ListenPacket(ctx, "udp", net.JoinHostPort(link.ServerAddr().String(), "4433"))
//	...
//	pc, err = transport.WithoutGSO(pc)
//	...
//	tr := &quic.Transport{Conn: pc}
//
// Instruments().EgressCounters counts the super-packets that left each end
// (Oversize), and shapedlinktest logs them when a test ends. The transport
// package's own QUIC arms wrap their sockets already.
//
// # The emulator process, and what an importer's main must allow for
//
// Where there is no netem, the shaper is this same program: New starts
// /proc/self/exe with an environment variable (QUICBENCH_EMULATOR_CONFIG)
// carrying its configuration, and an init function in this package turns
// such a process into the shaper before main runs, so any binary that
// imports shapedlink can shape its own links with no extra step. A program
// whose init functions (or flag parsing in init) would fail or print when
// re-executed with no arguments should keep that work in main. Reexec uses
// the same re-execution, with the program's own arguments, to enter a
// user namespace; Namespace.Start uses it, with the command's arguments
// and QUICBENCH_PROC_INIT in the environment, for the init of the
// command's PID namespace (an init function of an internal package this
// one imports turns it into the init, before main).
//
// # Measuring
//
// A Link's own methods are what an embedder needs: New and Close, the
// ends (Server, Client, Namespace) and addresses (ServerAddr,
// ClientAddr), what it was built for and with (Profile, Backend, Mode,
// Applied), and Err, which says whether the link stayed intact (for the
// emulator, whether the shaper process is still running): check it after
// every run. What a bench reads besides is grouped under
// Link.Instruments, and what an experiment does to the path under
// Link.Control.
//
// Instruments().Sampler and SampleQueue poll an end's egress queue
// (default every millisecond) and return QueueSample values, the same
// type for every backend; the emulator also splits drops into loss and
// limit drops. Instruments().EgressCounters reads nftables counters on
// each end's egress hook: all packets and bytes, and the packets longer
// than one wire packet, the evidence that a sender used UDP GSO (the hook
// runs before the device segments). Instruments().HostState records the
// kernel, TCP settings, backend, offloads and build; ShaperStats and
// EmulatorPID are the emulator's account and process; ScheduleStart and
// AppliedChanges place a schedule's changes in time. Control().BlockUDP
// and Control().DropRandom add dropping filters with their own counters.
//
// # In process
//
// BackendInProcess carries the link inside the calling process, on any
// operating system and with no privilege: no namespace, veth or socket,
// but the emulator's model (the same code, not a copy) between two
// in-process ends. Server().ListenPacket and Client().ListenPacket return
// net.PacketConns bound to 198.18.0.1 and 198.18.0.2 (any port, 0 for the
// next free one), and every datagram one end's sockets write crosses the
// shaped link to the socket bound to its destination port at the other
// end. A datagram is judged when it is written, at time.Now, as the
// emulator would judge the UDP frame it makes (14 + 20 + 8 bytes of
// headers and the payload, which the rate and the limit count); a
// goroutine per direction, asleep on a timer, delivers it when it is due.
// Every profile option works as on the emulator. The link also does the
// receiver's part: a corrupted datagram is dropped where the receiving
// host's checksum would drop it; a datagram for an unbound port, or one
// that does not fit the receiving socket's queue, is dropped and counted.
// Datagrams travel Not-ECT (a net.PacketConn cannot set the ECN field),
// so ecn=on drops rather than marks them.
//
// The link reads the time only from the time package, so inside a
// testing/synctest bubble it runs in the bubble's virtual time: a minute
// of traffic takes as long as the endpoints' code takes to run, and the
// same seeds and the same writes give the same packets at the same times,
// every run. Options.PacketTrace receives each datagram's steps
// (PacketEvent), for tests that compare runs or look at one packet's
// fate. Outside a bubble it runs in real time, with the timer's wake-up
// error, a cross-platform link for datagram protocols. Package
// shapedlinktest's Sim builds one for a test.
//
// It carries datagrams only: Listen and DialContext (streams), Do, Start
// and Run (code and processes in a namespace), and the instruments and
// controls that act on veths and nftables (EgressCounters, BlockUDP,
// DropRandom, AddClientAddr, RemoveClientAddr) return errors wrapping
// errors.ErrUnsupported that say so. ShaperStats, the Sampler, HostState,
// Applied ("inproc delay 40ms rate 10Mbit limit 110 ... seed N"),
// ScheduleStart and AppliedChanges work as for the emulator. BackendAuto
// never chooses it, since it changes what the ends' sockets are.
//
// # Other systems
//
// Network namespaces need Linux. Elsewhere the package compiles with the
// same API and BackendInProcess works as on Linux; every other backend's
// New, and Reexec and NewQdiscSampler, return an error wrapping
// errors.ErrUnsupported.
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
//		link.Server().Do(func() error { /* listen on link.ServerAddr() */ })
//		link.Client().Start(exec.Command("./client", link.ServerAddr().String()))
//		samples, _ := link.Instruments().SampleQueue(runCtx, shapedlink.ServerEnd, 0)
//		if err := link.Err(); err != nil { /* discard the run */ }
//	}
package shapedlink

// The package comment shows these profiles because they are refused
// (docs_test.go parses every other one it shows):
// refused on purpose: 80:0.0000001 80.001:10 80:10:100 80:10,trace=const:5,rate=3
