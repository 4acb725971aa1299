//go:build linux

package netemnl_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A direction of 40 ms, 10 Mbit/s and Gilbert-Elliott loss becomes one
// netem qdisc's options; its dump, read back, names the model in tc's
// words.
func Example() {
	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110,
		GE: linkspec.GE{P: 1, R: 30, OneMinusH: 100}, HasGE: true}
	root := netlink.QdiscAttrs{LinkIndex: 2, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	q := netemnl.Root(root, d)
	opts, err := netemnl.Options(q, d, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := netemnl.QdiscRequest(unix.NLM_F_CREATE|unix.NLM_F_EXCL, 2, root.Handle, root.Parent, "netem", opts)
	fmt.Println(len(req.Serialize()), "bytes to send")

	// What a dump of that device would answer, parsed back.
	qs, err := netemnl.ParseDump([][]byte{req.Serialize()[unix.SizeofNlMsghdr:]}, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := netemnl.ExtrasOf(qs)
	if err != nil {
		fmt.Println(err)
		return
	}
	line, err := netemnl.ReadBack(q, x, d)
	fmt.Println(line, "seed", x.Seed, err)
	// Output:
	// 156 bytes to send
	// netem limit 110 delay 40ms rate 10Mbit loss gemodel p 1% r 30% 1-h 100% 1-k 0% seed 7 <nil>
}
