// Package loop is the run loop, written once: for each planned run, open
// its ends, start the server, drive the client, end the server, record the
// run (results.RecordRun), close the ends.
//
// Where a run's two ends run is an Ends: rig.Local builds a link on this
// machine for each run, and twohost.Client runs the server on another
// host's daemon. The loop does not know which.
//
// An experiment supplies a Job per run: what its roles are told (Roles),
// what runs beside the client (Drive), and its part of the record (Finish,
// Extra). One makes one run; Pending and Run make a plan's runs that are
// not yet measured, so an interrupted plan resumes.
package loop
