// Command spicelive runs a real SPICE session over each arm of the SPICE
// tunnel across a shaped link, measures key-to-draw latency, and reads it
// beside two other readings of the same cell: spicelike replaying the
// session's recorded shape, and the headline's synthetic workload.
//
//	go run ./examples/spicelive                  # 80:10 and 150:2 at 0% and 1% loss, every arm, 5 x 45 s
//	go run ./examples/spicelive -control         # the control: tcp at 10:100 and 110:100, no loss
//	go run ./examples/spicelive -control -pixel  # the same, with key-to-pixel at spicy's window beside key-to-draw
//	go run ./examples/spicelive -profiles 80:10 -losses 1 -repeats 1 -duration 10 -warmup 2
//	go run ./examples/spicelive -summary -workdir results/spicelive
//	go run ./examples/spicelive -record video -duration 40 -workdir results/rec-video
//
// The rig, the figure, the replay and the control are package
// measure/spicelive's, which this command runs; docs/spice-live.md has
// the method and the findings.
//
// With a -display workload the replay reading plays spicelike's shipped
// recording of that workload (-replay reference records one over
// -reference instead). -record records only such a session and writes it
// to -workdir/<workload>.json.gz, as the shipped ones were made.
//
// # Results and exit codes
//
// Runs are recorded as the other commands' are, one results tree per
// reading: WORKDIR/live, WORKDIR/replay and WORKDIR/synthetic (the
// control's in WORKDIR/control), each WORKDIR/<reading>/<cell>/<arm>/r<N>
// with run.json, both roles' specs, logs and results, and for a live run
// live.json (the analysis), the traces, the X servers' logs and the
// screenshot. A rerun resumes: measured runs are skipped, failed ones set
// aside and redone, and a work directory made with other settings is
// refused. It exits 0 when every run was measured, 1 when some failed (or
// the control did), 2 when the command line or the work directory was
// refused or the programs a live session needs are missing, 130 when
// interrupted.
//
// It needs Debian's xserver-xspice, spice-client-gtk, xvfb, xdotool and
// xterm (and imagemagick for the screenshots), and root: like the other
// commands it re-executes itself in a user namespace when started
// unprivileged, but whether Xorg starts there has not been tried.
package main
