package shapedlink

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shakenfist/quicbench/internal/buildinfo"
)

// HostState reads the record for this link.
func (in *Instruments) HostState() (HostState, error) {
	l := in.l
	hs := HostState{
		NetemAvailable: l.netemAvailable,
		Backend:        l.backend,
		OffloadMode:    l.offloadMode,
		Mode:           l.mode,
		Profile:        l.profile.String(),
		Limit:          l.profile.Direction(Down).Limit,
		Applied:        l.Applied(),
		Offload:        in.Offload(),
	}
	l.shaper.seeds(&hs)
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return hs, fmt.Errorf("shapedlink: uname: %w", err)
	}
	hs.KernelRelease = unix.ByteSliceToString(uts.Release[:])
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
		return hs, err
	}
	var ecn [2]string
	for i, ns := range []*Namespace{l.server, l.client} {
		if err := ns.Do(func() (err error) {
			ecn[i], err = readSysctl("net/ipv4/tcp_ecn")
			return err
		}); err != nil {
			return hs, fmt.Errorf("shapedlink: reading tcp_ecn in the %s namespace: %w", ns.Role(), err)
		}
	}
	hs.TCPECN = ecn[0]
	if ecn[0] != ecn[1] {
		hs.TCPECN = "server " + ecn[0] + ", client " + ecn[1]
	}
	// Git, where the build has no commit stamp, runs once per process.
	bi := buildinfo.Read()
	hs.Module, hs.Version, hs.GoVersion = bi.Module, bi.Version, bi.GoVersion
	hs.Commit, hs.CommitSource, hs.CommitMissing = bi.Commit, bi.CommitSource, bi.CommitMissing
	return hs, nil
}
