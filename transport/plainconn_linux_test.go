package transport

import (
	"context"
	"net"
	"testing"
)

// plainConn hides a UDP socket behind the bare net.PacketConn interface,
// as a conn that is not a UDP socket (an in-process link's end) is.
type plainConn struct{ net.PacketConn }

// SetReadBuffer and SetWriteBuffer keep quic-go from warning that it
// cannot size the buffers.
func (plainConn) SetReadBuffer(int) error  { return nil }
func (plainConn) SetWriteBuffer(int) error { return nil }

// TestPlainPacketConn: the QUIC arms take a net.PacketConn that is not a
// *net.UDPConn from Options.ListenPacket, give it to quic-go as it is (no
// GSO wrapper: quic-go cannot do GSO on it), carry data both ways over
// it, and record in State what the conn was and that GSO was off.
func TestPlainPacketConn(t *testing.T) {
	for _, arm := range []Arm{ArmQUIC, ArmQUICPerChannel} {
		t.Run(string(arm), func(t *testing.T) {
			o := options(t, arm, 3)
			o.ListenPacket = func(ctx context.Context, network, address string) (net.PacketConn, error) {
				pc, err := (&net.ListenConfig{}).ListenPacket(ctx, network, address)
				if err != nil {
					return nil, err
				}
				return plainConn{pc}, nil
			}
			server, client := pair(t, arm, o, o)
			exchange(t, server, client, 100_000)
			for _, s := range []*Session{server, client} {
				st := s.State()
				if len(st.QUIC) == 0 {
					t.Fatalf("%s: no QUIC connection in State", st.Role)
				}
				for _, q := range st.QUIC {
					if q.Socket.PacketConn != "transport.plainConn" || q.Socket.GSOWrapper || q.GSO || q.Socket.MTUDiscover != -1 {
						t.Errorf("%s: socket %+v, GSO %v; want the conn's type recorded, no wrapper, no GSO", st.Role, q.Socket, q.GSO)
					}
				}
			}
		})
	}
}

// TestPacketSize: Options.PacketSize sets the QUIC packets' size, which
// State records and the largest packet sent keeps to; the default is
// DatagramSize.
func TestPacketSize(t *testing.T) {
	for _, size := range []int{0, 1280} {
		o := options(t, ArmQUIC, 1)
		o.PacketSize = size
		server, client := pair(t, ArmQUIC, o, o)
		exchange(t, server, client, 200_000)
		want := size
		if want == 0 {
			want = DatagramSize
		}
		for _, s := range []*Session{server, client} {
			q := s.State().QUIC[0]
			if q.ConfiguredPacketSize != want || q.MaxShortHeaderPacket != want || q.OversizePackets != 0 {
				t.Errorf("PacketSize %d, %s: configured %d, largest packet %d, %d oversize; want %d, %d, 0",
					size, s.State().Role, q.ConfiguredPacketSize, q.MaxShortHeaderPacket, q.OversizePackets, want, want)
			}
		}
	}
}
