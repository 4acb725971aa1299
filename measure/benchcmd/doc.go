// Package benchcmd is the command side of the matrix experiment (packages
// plan and bench) that the example commands share: their Defaults, the
// flags of axes (AxisFlag, SessionsFlag, CapsFlag), and Main, which
// registers the flags every matrix command has (with an environment
// variable behind most of them), parses a command's arguments into a
// plan.Matrix once, prints its progress, runs it (bench.Run), prints the
// summary and picks the exit code (0 measured, 1 runs failed, 2 refused
// before anything ran, 130 interrupted). -serve runs the two-host daemon
// instead (package twohost).
//
// A command is a main that calls Main:
//
//	func main() {
//		d := benchcmd.Defaults{Profiles: "80:10", Losses: "1", CCs: "reno", Arms: "tcp quic",
//			Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/mybench"}
//		os.Exit(benchcmd.Main("mybench", "tcp against quic", d, d, nil))
//	}
//
// The library packages below it take values: a plan.Matrix, validated
// once by Matrix.Validate.
package benchcmd
