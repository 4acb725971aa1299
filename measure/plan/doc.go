// Package plan is the five-channel matrix as a plan, apart from running
// it: a Matrix of profiles x loss levels x TCP congestion controls (x
// sessions x caps x axes of its own) x repeats, each cell running every arm
// interleaved (tcp, quic, tcp, quic, ...), planned as a list of Run values
// in the order they run. Package bench runs a plan (bench.Run), each Run on
// package loop; nothing here starts a process or builds a link.
//
// A matrix is a list of axes (Matrix.AllAxes): profile, congestion
// control, loss, sessions and cap when set, the matrix's own axes
// (Matrix.Axes), repeat and arm, the first outermost. An Axis has a name,
// its values, and an Apply that sets one value on a Run and in its cell,
// which names the run's directory. A new axis is a NewAxis (its values
// recorded in results.Cell.Axes and named "_name-value" in the directory)
// and, for a command-line flag, a benchcmd.AxisFlag listed in the
// command's benchcmd.Defaults.Axes; matrix.json records it, and resume,
// shards, the merge and the summary read it with nothing more. The
// built-in sessions and cap axes are made the same way (axis_sessions.go,
// axis_cap.go) and name their values in cell fields of their own
// (results.Cell.Sessions and BulkCapFraction), as their work directories
// always have.
//
// A work directory holds one matrix: Matrix.Claim locks it for this
// process and writes matrix.json, or refuses (ErrWorkdir) a directory
// another command holds or that was made for another matrix, naming what
// differs. matrix.json records the offload mode (Link.Offload) only when
// it is keep, so that a wire matrix's record is what it was before the
// mode existed, and a record without it reads as wire.
//
// A Shard is one share of a matrix, so that several machines each run a
// part of it (ResolveShard reads -shard, SHARD or a Kubernetes Indexed
// Job's index); LoadShards merges their work directories back into one
// matrix's runs, refusing directories of different matrices, and says
// what the merge lacks (Merged.Note). LoadWorkdir reads one work directory
// for a summary, checked against its matrix.json.
//
// With Remote set the matrix runs between two hosts over the path as
// found: one cell per congestion control and session count, named
// results.PathProfile, and nothing that only an emulated link gives.
package plan
