//go:build !linux

package transport

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// The arms need Linux socket options (TCP_CONGESTION, TCP_INFO,
// UDP_SEGMENT); elsewhere every entry point fails with errUnsupported.
var errUnsupported = errors.New("transport: only Linux is supported")

type gsoOffConn struct{ udpSocket }

func newGSOOffConn(udpSocket) (*gsoOffConn, error) { return nil, errUnsupported }

// withoutGSO returns uc itself: quic-go uses GSO only on Linux.
func withoutGSO(uc *net.UDPConn) (net.PacketConn, error) { return uc, nil }

func readUDPSocketState(udpSocket, bool) UDPSocketState { return UDPSocketState{} }

// AvailableCongestionControl fails: only Linux is supported.
func AvailableCongestionControl() ([]string, error) { return nil, errUnsupported }

// HostCongestionControl fails: only Linux is supported.
func HostCongestionControl() (string, error) { return "", errUnsupported }

// CheckCongestionControl fails: only Linux is supported.
func CheckCongestionControl(string) error { return errUnsupported }

func controlTCP(syscall.RawConn, Options) error { return errUnsupported }

func readTCPOptions(syscall.RawConn) (TCPSocketOptions, error) {
	return TCPSocketOptions{}, errUnsupported
}

func readTCPInfo(syscall.RawConn, time.Duration) (TCPInfo, error) { return TCPInfo{}, errUnsupported }
