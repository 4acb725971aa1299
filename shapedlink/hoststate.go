package shapedlink

import "github.com/shakenfist/quicbench/internal/buildinfo"

// HostState is what matters for comparing runs made on different hosts or
// days: the kernel, the TCP settings the experiment's sockets get, whether
// kernel netem exists, the backend and offloads in force, and the code that
// ran. TCP values are read inside the server namespace (they are
// per-namespace and are what the link's sockets see); the in-process link
// has no namespace and no TCP, so they stay empty for it, as the kernel's
// do on a system that is not Linux.
type HostState struct {
	KernelRelease                 string   `json:"kernel_release"`
	TCPAvailableCongestionControl []string `json:"tcp_available_congestion_control"`
	TCPCongestionControl          string   `json:"tcp_congestion_control"` // the default for new sockets
	TCPRmem                       string   `json:"tcp_rmem"`               // "min default max", bytes
	TCPWmem                       string   `json:"tcp_wmem"`
	TCPNotsentLowat               string   `json:"tcp_notsent_lowat"`
	// TCPECN is net.ipv4.tcp_ecn in the two namespaces: "2" (the kernel's
	// default: answer ECN, never ask), "1" (ask) or "0", or
	// "server X, client Y" when they differ.
	TCPECN         string  `json:"tcp_ecn"`
	NetemAvailable bool    `json:"netem_available"`
	Backend        Backend `json:"backend"`
	// OffloadMode is Options.Offload as in force: "keep", or "" for
	// wire-sized packets (and for the in-process link, which has no
	// devices).
	OffloadMode OffloadMode `json:"offload_mode,omitempty"`
	Mode        Mode        `json:"mode"`
	Profile     string      `json:"profile"` // Profile.String()
	Limit       int         `json:"limit"`   // packets, server->client (Applied has both directions)
	Applied     []string    `json:"applied"` // as Link.Applied
	// EmulatorSeeds are the emulator's (or the in-process link's) seeds,
	// server->client then client->server; empty for netem.
	EmulatorSeeds []uint64 `json:"emulator_seeds,omitempty"`
	// NetemPRNG says how netem's random draws were seeded, as the kernel
	// reported it: "seeds S1 S2" (server->client, client->server; Linux
	// 6.6 and later report a seed for every netem, chosen at random when
	// the caller gave none), or why they cannot be repeated. Empty for the
	// emulator.
	NetemPRNG string    `json:"netem_prng,omitempty"`
	Offload   []Offload `json:"offload"`
	Module    string    `json:"module"`  // the main module's path
	Version   string    `json:"version"` // the main module's version, or "(devel)"
	// Commit is the revision the code was built from, with "+dirty" when
	// tracked files differed from it. CommitSource says where it came
	// from: "buildinfo" (the toolchain's stamp, as go build and go
	// install make in a checkout) or "git" (asked in the source directory
	// the code was compiled from, for go run, go test and
	// -buildvcs=false, which stamp none). When neither could say,
	// Commit is empty and CommitMissing says why.
	Commit        string `json:"commit"`
	CommitSource  string `json:"commit_source,omitempty"`
	CommitMissing string `json:"commit_missing,omitempty"`
	GoVersion     string `json:"go_version"`
}

// HostState reads the record for this link.
func (in *Instruments) HostState() (HostState, error) {
	l := in.l
	hs := HostState{
		NetemAvailable: l.netemAvailable,
		Backend:        l.backend,
		OffloadMode:    l.offloadMode,
		Mode:           l.mode,
		Profile:        l.profile.String(),
		Limit:          l.profile.Direction(Down).Limit,
		Applied:        l.Applied(),
		Offload:        in.Offload(),
	}
	l.shaper.seeds(&hs)
	if err := l.readHostKernel(&hs); err != nil {
		return hs, err
	}
	// Git, where the build has no commit stamp, runs once per process.
	bi := buildinfo.Read()
	hs.Module, hs.Version, hs.GoVersion = bi.Module, bi.Version, bi.GoVersion
	hs.Commit, hs.CommitSource, hs.CommitMissing = bi.Commit, bi.CommitSource, bi.CommitMissing
	return hs, nil
}
