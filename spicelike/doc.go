// Package spicelike is a SPICE-shaped workload: the traffic of one remote
// desktop session, reduced to what matters for comparing transports, run
// over any set of io.ReadWriters.
//
// It is only the traffic shape. It knows nothing of sockets, namespaces,
// transports or statistics: a transport hands it N connected channels (N
// TCP connections, N streams of one QUIC connection, ...), it runs the
// exchange and returns raw measurements for the statistics to digest.
//
// # The session
//
// A session is a list of channels, each with a Role. Defaults has the
// reference session of five:
//
//	main      Quiet
//	display   Saturating   server → client bulk, 64 KiB writes, as fast as the transport takes them
//	inputs    Interactive  64-byte request, echoed verbatim, one outstanding, 20 ms gap after each echo
//	cursor    Quiet
//	playback  Quiet
//
// A quiet channel exchanges one byte each way when the run opens, so that
// the server has seen it (a QUIC stream does not exist for the peer until
// it carries data), and then stays idle. SessionChannels builds sessions
// with other numbers of quiet channels; the returned slice is plain data,
// so any channel's role can be changed (at most one Saturating and one
// Interactive per session: run several sessions for more, see RunClients).
//
// One outstanding echo at a time is what makes a lost packet show up as one
// long round trip instead of hiding behind later requests.
//
// # Running it
//
// The two ends are RunServer and RunClient. They take the same Config and
// the channels in the same order (the transport package defines the
// order); each checks the order with a one-byte opener carrying the
// channel's index. The client times the run: Config.Duration from the
// moment every channel has opened, of which the first Config.Warmup is
// kept but marked as warm-up. Then it closes the run with an end marker on
// every channel (echoed back on quiet and interactive channels) and
// returns; the server returns once it has seen every end marker. Neither
// closes the channels: the caller does, after the Run function returns.
// A run may leave deadlines in the past on them, so they are not for
// reuse.
// Both honour their context, and neither hangs when the other goes away:
// blocked reads and writes are interrupted through SetReadDeadline /
// SetWriteDeadline (net.Conn, net.Pipe and quic-go streams have them) or,
// failing that, io.Closer.
//
// ClientResult is the measurement: every round trip as a Sample with its
// start offset in the run (so warm-up samples can be discarded later, see
// Measured), the timeouts, the bulk bytes with their window and rate in
// Mbit/s, and per-channel errors. A round trip longer than
// Config.Timeout is a timeout: it is counted and reported (never dropped),
// and it ends the interactive channel's measurement, so a run with a
// timeout has fewer samples than its neighbours and the statistics must say
// so. A corrupted or out-of-order echo is an error, not a sample, and ends
// the run.
//
// # Beyond the five-channel session
//
//   - Config.BulkRateCap paces the saturating channel (a transcoded or
//     rate-limited display). The pacer schedules each write's share of the
//     rate from the previous due time, so timer overshoot does not
//     accumulate; its granularity is one BulkBufferSize write, and after a
//     stall it catches up by at most four writes or 100 ms of the rate.
//   - Config.EchoSize and Config.EchoGap change the interactive exchange.
//   - RunClients and RunServers run several sessions at once, each over its
//     own channels.
//
// # Replaying a recorded session
//
// Config.Replay plays back a real session's shape instead of the roles
// above: every channel of a SPICE session recorded by the tunnel in
// examples/spicetunnel, each direction's messages at their recorded sizes
// and times (looping every Replay.Span), the key presses as the start of
// a sample and each key's echo sent by the server its recorded think time
// after the key arrived. A Sample is then key-to-echo, the replay's
// analogue of the live session's key-to-draw. ReplayFromTraces builds a
// Replay from the two ends' traces (package spicelike/spicetrace, which
// holds only the file format: spicelike reads traces without knowing
// SPICE's wire format or sockets). Playback is open-loop: it does not slow
// down the way spice-server does when the socket pushes back, and
// ReplayStats says how late the messages left. See Replay.
//
// The package ships recorded sessions (Recordings, Recording): one live
// SPICE session per display workload of measure/spicelive, recorded by
// its command's -record while the workload filled the display channel, to
// play as a workload of its own without an X server.
//
// # Timing and the garbage collector
//
// The interactive channel runs in its own goroutine on each side, so the
// bulk reader never delays it, and its round trip allocates nothing:
// buffers and the sample slice are made before the run, and the timeout is
// a watchdog goroutine that watches an atomic deadline (it wakes about once
// per Timeout, not per round trip). The bulk reader and writer reuse one
// buffer. This keeps the workload from provoking collections and from
// being made to assist one. It cannot stop the rest of the process from
// allocating (a user-space QUIC stack allocates per packet), and a
// collection started by anything in the process can still add its
// stop-the-world pauses (typically tens of microseconds) to a round trip,
// and take CPU from the goroutines that carry it. This is why the commands
// in examples/ run the server and the client in separate processes (one per
// network namespace): the server's bulk writing and its half of the
// transport then share neither a heap nor a collector with the end that
// measures. Running both ends in one process, as the tests do, is fine for
// checking behaviour but not for sub-millisecond comparisons.
package spicelike
