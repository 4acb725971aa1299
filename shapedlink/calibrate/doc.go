// Package calibrate measures how faithfully a shapedlink link reproduces
// its profile: for each profile the idle round trip beside a bare veth
// pair, bulk TCP throughput, loss against its interval, the emulator's
// CPU per packet, and (with jitter, a trace or a schedule) how closely the
// delay or the rate follows the configuration; then, as asked, the
// highest rate held, iperf3 flows, queue disciplines, a UDP_SEGMENT loss
// flood and a quic-go transfer with GSO. It is what examples/calibrate
// runs, for code that wants the figures itself. It measures the link, so
// it lives beside it: it needs shapedlink, and transport only for the
// quic-go transfer, and nothing of the comparison.
//
// Measuring and rendering are separate: Run takes a Config and returns a
// Report, a plain value that WriteTable prints for a reader and WriteJSON
// saves; a saved report decodes back into a Report and renders the same.
//
//	cfg := calibrate.DefaultConfig()
//	cfg.Profiles = []shapedlink.Profile{p}
//	cfg.SweepRates = nil
//	rep, err := calibrate.Run(ctx, cfg)
//	if err != nil { ... }
//	calibrate.WriteTable(os.Stdout, rep)
//	failed, total := rep.Failures()
//
// Run builds links, so it needs root or shapedlink.Reexec; it measures
// timing, so the machine's other load shows in its figures. Config.Noise
// adds a known load of its own (NoiseLoad) to measure a noisy host on
// purpose, Config.TraceLate catches an emulator stall in a kernel trace
// (root), and Config.KeepAwake keeps the CPUs from halting beside every
// emulator link, or KeepAwakeAuto decides that by probing the host first
// (DepartureWindow batches its departures; the command takes them from
// its flags, whose defaults are -keep-awake auto and
// shapedlink.DefaultDepartureWindow, and a Config built in Go has them
// only when set).
// docs/calibration.md has the results and what they mean.
package calibrate
