package shapedlink

// HostState is what matters for comparing runs made on different hosts or
// days: the kernel, the TCP settings in the server namespace, netem, the
// backend and offloads, and the code that ran. In process, and off Linux,
// the kernel's and TCP's fields are empty.
type HostState struct {
	KernelRelease                 string   `json:"kernel_release"`
	TCPAvailableCongestionControl []string `json:"tcp_available_congestion_control"`
	TCPCongestionControl          string   `json:"tcp_congestion_control"` // the default for new sockets
	TCPRmem                       string   `json:"tcp_rmem"`               // "min default max", bytes
	TCPWmem                       string   `json:"tcp_wmem"`
	TCPNotsentLowat               string   `json:"tcp_notsent_lowat"`
	// TCPECN is net.ipv4.tcp_ecn, or "server X, client Y" when the
	// namespaces differ.
	TCPECN         string      `json:"tcp_ecn"`
	NetemAvailable bool        `json:"netem_available"`
	Backend        Backend     `json:"backend"`
	OffloadMode    OffloadMode `json:"offload_mode,omitempty"`
	Mode           Mode        `json:"mode"`
	Profile        string      `json:"profile"` // Profile.String()
	Limit          int         `json:"limit"`   // packets, server->client (Applied has both directions)
	Applied        []string    `json:"applied"` // as Link.Applied
	// EmulatorSeeds are the emulator's or in-process link's seeds, down
	// then up.
	EmulatorSeeds []uint64 `json:"emulator_seeds,omitempty"`
	// EmulatorKeepAwakeCPUs are the CPUs kept awake for the emulator
	// (Options.EmulatorKeepAwake), one SCHED_IDLE busy loop each; empty
	// when it is off.
	EmulatorKeepAwakeCPUs []int `json:"emulator_keep_awake_cpus,omitempty"`
	// EmulatorWakeProbe is the probe that decided keep-awake, with its
	// figures (Options.EmulatorKeepAwakeAuto); nil when it was fixed.
	EmulatorWakeProbe *WakeProbe `json:"emulator_wake_probe,omitempty"`
	// NetemPRNG is netem's seeds as read back, "seeds DOWN UP", or why
	// its draws cannot be repeated.
	NetemPRNG string    `json:"netem_prng,omitempty"`
	Offload   []Offload `json:"offload"`
	Module    string    `json:"module"`  // the main module's path
	Version   string    `json:"version"` // the main module's version, or "(devel)"
	// Commit is the revision built from ("+dirty" with local changes);
	// CommitSource is "buildinfo" or "git"; CommitMissing says why
	// Commit is empty.
	Commit        string `json:"commit"`
	CommitSource  string `json:"commit_source,omitempty"`
	CommitMissing string `json:"commit_missing,omitempty"`
	GoVersion     string `json:"go_version"`
}
