package shapedlink

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// readHostKernel fills in what the kernel says: its release and, for a
// link with namespaces, the TCP settings its sockets get and ECN in both
// namespaces (the in-process link has neither namespaces nor TCP).
func (l *Link) readHostKernel(hs *HostState) error {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return fmt.Errorf("shapedlink: uname: %w", err)
	}
	hs.KernelRelease = unix.ByteSliceToString(uts.Release[:])
	if l.server.inProcess() {
		return nil
	}
	err := l.server.Do(func() error {
		for _, r := range []struct {
			key string
			out *string
		}{
			{"net/ipv4/tcp_congestion_control", &hs.TCPCongestionControl},
			{"net/ipv4/tcp_rmem", &hs.TCPRmem},
			{"net/ipv4/tcp_wmem", &hs.TCPWmem},
			{"net/ipv4/tcp_notsent_lowat", &hs.TCPNotsentLowat},
		} {
			v, err := readSysctl(r.key)
			if err != nil {
				return fmt.Errorf("shapedlink: reading %s: %w", r.key, err)
			}
			*r.out = v
		}
		v, err := readSysctl("net/ipv4/tcp_available_congestion_control")
		if err != nil {
			return fmt.Errorf("shapedlink: reading tcp_available_congestion_control: %w", err)
		}
		hs.TCPAvailableCongestionControl = strings.Fields(v)
		return nil
	})
	if err != nil {
		return err
	}
	var ecn [2]string
	for i, ns := range []*Namespace{l.server, l.client} {
		if err := ns.Do(func() (err error) {
			ecn[i], err = readSysctl("net/ipv4/tcp_ecn")
			return err
		}); err != nil {
			return fmt.Errorf("shapedlink: reading tcp_ecn in the %s namespace: %w", ns.Role(), err)
		}
	}
	hs.TCPECN = ecn[0]
	if ecn[0] != ecn[1] {
		hs.TCPECN = "server " + ecn[0] + ", client " + ecn[1]
	}
	return nil
}
