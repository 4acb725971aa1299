// Package linkflag is the one home of the link flags a command shares with
// every other: -profiles (or -profile, once or repeated), -backend, -mode,
// -offload, -seed and the emulator's -keep-awake and -departure-window,
// each with one help text and one default, checked in one place.
// -keep-awake is on, off or auto (the default: shapedlink's
// EmulatorKeepAwakeAuto, decided by probing the host); alone it is on,
// and =true and =false are on and off. Parse with package cli, which
// reads "-keep-awake off" as one flag.
//
// A command registers the flags it has on its flag.FlagSet, parses, and
// reads them back as shapedlink values:
//
//	lf := linkflag.Register(fs, linkflag.Config{
//		Flags:    linkflag.Profiles | linkflag.Backend | linkflag.Offload | linkflag.Seed,
//		Profiles: "80:10 150:2",
//	})
//	if err := fs.Parse(args); err != nil { ... }
//	profiles, err := lf.Profiles() // []shapedlink.Profile, each once
//	opts, err := lf.Options()      // shapedlink.Options
//
// A command that takes its profiles one flag each (examples/simcheck)
// registers ProfileList: -profile may then be given any number of times,
// and Profiles reads them, or the default list when none is given.
//
// Defaults differ only where commands genuinely differ: the profiles, the
// offload mode (examples/overlink keeps the kernel's offloads, the bench
// pins wire-sized packets) and the seed (a calibration fixes one). A
// profile list may also be read from an environment variable, as the
// reference bench's PROFILES.
//
// The emulator's settings default to its measured best (a 200 us
// departure window, the CPUs left to idle; docs/calibration.md): a command passes them to
// every link, and shapedlink uses them only where the emulator runs.
//
// Values are checked after parsing, not while the flag set parses, so
// that one error names every wrong flag ("-backend \"x\": want netem,
// emulator or empty") and a command prints it as it prints its other
// input errors.
//
// The package knows links only: nothing of transports, workloads or
// statistics.
package linkflag
