package main

import (
	"errors"
	"io/fs"
	"os"

	"github.com/shakenfist/quicbench/shapedlink"
)

// listening lists the listening sockets of namespace ns, from its
// /proc/net tables as a thread inside it sees them. A table the kernel
// does not have (tcp6 and udp6 without IPv6) is skipped.
func listening(ns *shapedlink.Namespace) ([]socket, error) {
	var out []socket
	err := ns.Do(func() error {
		for _, t := range []struct{ file, proto string }{{"tcp", "tcp"}, {"tcp6", "tcp"}, {"udp", "udp"}, {"udp6", "udp"}} {
			// thread-self: the namespace of this thread, which Do has
			// moved, not the process's.
			b, err := os.ReadFile("/proc/thread-self/net/" + t.file)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			socks, err := parseProcNet(t.proto, b)
			if err != nil {
				return err
			}
			for _, s := range socks {
				if !containsSocket(out, s) {
					out = append(out, s)
				}
			}
		}
		return nil
	})
	return out, err
}
