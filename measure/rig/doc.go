// Package rig runs a run's two roles as processes: the program
// re-executed as a server or a client (RoleEnv, ServeRole, SignalReady,
// ReadResult), inside the two ends of a fresh shapedlink.Link, and
// puts what they report into the run's record (RecordStates,
// RecordWorkload).
//
// A Stage is one run's two ends, open; Local opens one on a link built on
// this machine, and measure/twohost's Client opens one on the path to
// another host. Package loop writes the run itself once, over either.
//
// An experiment's main calls ServeRole first thing: in a process started as
// one of its roles it does the role's job, writes its result and exits;
// otherwise it returns at once.
package rig
