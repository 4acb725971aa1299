// Command calibrate measures how faithfully a shapedlink link reproduces
// its profile: configured against measured, per profile, with the figures
// the emulator's users need to trust it as they trust netem. The flags
// fill a calibrate.Config; shapedlink/calibrate (go doc
// ./shapedlink/calibrate) does the measuring and the rendering, and says what
// each figure is; docs/calibration.md has the results.
//
//	go run ./examples/calibrate                      # table on stdout
//	go run ./examples/calibrate -json > calib.json   # the same figures as JSON
//	go run ./examples/calibrate -profiles "80:10 80:10:1" -bulk 10s
//	go run ./examples/calibrate -backend netem       # calibrate kernel netem instead
//	go run ./examples/calibrate -render calib.json   # the table for a saved report
//	go run ./examples/calibrate -offload keep        # links that keep segmentation offload
//	go run ./examples/calibrate -profiles "80:10,jitter=5/normal 80:10,down.trace=cell:10/0.5 80:10,down.schedule=blackout:300ms/4s" -sweep ""
//	go run ./examples/calibrate -profiles "" -sweep "" -iperf3 "10 100 1000 2000"
//	go run ./examples/calibrate -profiles "" -sweep "" -qdisc "fifo codel fq_codel"
//	go run ./examples/calibrate -offload keep -profiles "" -sweep "" -iperf3 "1000 2000 5000" -gsoloss 5:2000:0.1 -quicgso 5:1000:1
//
// By default it calibrates 80:10, 150:2, 20:100 and 5:1000, each at 0%
// and 1% loss, then searches the highest rate held within 5% at 5 ms RTT
// (-sweep). -iperf3, -qdisc, -gsoloss and -quicgso add their series;
// -profiles "" and -sweep "" leave only those. The machine's other load
// spoils timing: run it on an otherwise idle machine. Every emulator link
// runs with a 200 us departure window and keep-awake decided by probing
// the host, as every command's links do (-departure-window 0 and
// -keep-awake on or off set them; the bare pairs never have either); the
// report records both, and the probe.
//
// It runs as root, or as any user where unprivileged user namespaces are
// allowed: it then re-executes itself in a user and network namespace of
// its own (shapedlink.Reexec), where the 32 MiB buffers of the BBR flow
// are capped by the host's net.core.rmem_max and wmem_max (noted under
// the table).
//
// Exit status: 0 when every profile, sweep rate, iperf3 flow, discipline,
// UDP_SEGMENT flood and quic-go transfer was measured; 1 when any could
// not be, with "N of M measurements failed" on stderr after the figures
// of what was measured, or when the lists given cannot be read; 2 for a
// usage error. -render measures nothing and exits 0, or 1 when the file
// is not a report it reads: missing, not a regular file (a pipe or a
// device is refused without reading it), over 64 MiB, or not a -json
// report.
package main
