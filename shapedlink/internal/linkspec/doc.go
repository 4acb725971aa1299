// Package linkspec is the one description of a link direction that
// shapedlink, its netem encoder and its emulator share: what a direction
// is (Direction, with GE, Queue and the schedule's Changes), the profile
// options that set it (the table options, from which parsing, formatting,
// the grammar, the help text and the docs check are all made), the one
// check of a direction (Direction.Check, CheckLoaded), the limits (one
// constant each), schedules and traces as loaded, and the counters a
// userspace carrier keeps of a direction (Counters).
//
// It is internal to shapedlink, which re-exports what an importer names
// (shapedlink.Direction, DirOptions, GE, Queue, Schedule, Trace,
// ShaperCounters) as type aliases.
//
// # Adding an impairment
//
// An impairment is a field (or a few) of Direction, a row of options (its
// key, the form of its value, a line of doc, how the value is parsed into
// a Direction and written back, and what netem cannot build of it), and
// its words in Direction.Describe; then the netem encoder writes it and
// the model (package linkmodel) runs it. Nothing else lists option keys.
//
// Use:
//
//	var o linkspec.DirOptions
//	if err := o.Set("loss", "ge:1/30"); err != nil { ... }
//	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110}
//	o.Apply(&d)
//	if key, why := d.Check(); why != "" { ... }
//	fmt.Println(d.Describe()) // delay 40ms rate 10Mbit limit 110 loss gemodel p 1% ...
package linkspec
