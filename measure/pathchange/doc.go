// Package pathchange moves a live session's client to a new address and
// records what each arm does about it: whether the session survives, how
// long the interactive channel stalls, what each side logged and when, and
// how TCP fails. It is what examples/pathchange runs; docs/pathchange.md
// has the method and the findings.
//
// Each run builds a fresh shaped link, gives the client end a second
// address (shapedlink's AddClientAddr), and runs the server and the client
// as separate processes in their namespaces with the spicelike workload.
// At Change.At after the session is up the client changes path in one of
// two orders: OrderMakeFirst migrates (transport.Session.Migrate) and then
// has the old address removed; OrderBreakFirst has it removed first. TCP
// cannot migrate. Each run directory holds the usual run.json and the
// path-change Record in pathchange.json; Run summarises the records per loss
// level and arm (Result.Rows, Result.Summary).
//
// # Use
//
// Call MaybeRunRole first thing in main (and in TestMain), then Prepare,
// then Run:
//
//	pathchange.MaybeRunRole()
//	if err := pathchange.Prepare(); err != nil { ... }
//	res, err := pathchange.Run(ctx, cfg)
//	fmt.Print(res.Summary)
//	if line := pathchange.Failures(res.Records); line != "" { ... }
//
// Run resumes: a run with a record is not made again (Config.Redo makes
// it), and a run recorded as failed is. It runs on Linux, as root or in a
// user namespace.
package pathchange
