// Package netemnl is the netlink encoding of shapedlink's netem backend:
// the bytes of the qdiscs that shape one direction of a link, and the
// reading of those qdiscs as the kernel dumps them back. It sends nothing;
// shapedlink sends what it builds, inside the link's namespaces.
//
// It is internal to shapedlink (as netlink keeps its raw encoding in nl/):
// code that wants a shaped link uses shapedlink.New.
//
// # Writing
//
// Root makes the netem qdisc for a linkspec.Direction (its delay, jitter,
// rate, limit and every random process, as the netlink library holds
// them) and Options its TCA_OPTIONS: tc_netem_qopt and what the library
// writes besides, then the attributes it cannot write: the delay and
// jitter in nanoseconds, the Gilbert-Elliott or 4-state loss model, the
// jitter's distribution table (package disttable) and the PRNG seed.
// A direction with a queue discipline (Queue.Managed) is a chain,
//
//	netem 1: (delay, loss; no rate) -> tbf 2: (rate) -> codel|fq_codel 3:
//
// whose tbf and discipline options ChainOptions builds. QdiscRequest wraps
// any of these in an RTM_NEWQDISC message.
//
// # Reading back
//
// DumpRequest and ParseDump list the qdiscs of a device; Extras finds
// what the root netem's dump holds beyond the netlink library's parse
// (the loss model, the seed); ReadBack and DescribeChain render the
// qdiscs in tc's words and order, for the link's applied lines.
//
//	q := netemnl.Root(attrs, d)
//	opts, err := netemnl.Options(q, d, seed)
//	req := netemnl.QdiscRequest(unix.NLM_F_CREATE|unix.NLM_F_EXCL, ifindex, 1<<16, netlink.HANDLE_ROOT, "netem", opts)
//	_, err = req.Execute(unix.NETLINK_ROUTE, 0) // in the link's namespace
//
// Everything here is Linux-only; on other systems the package is empty.
package netemnl
