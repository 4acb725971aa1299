package shapedlink

import (
	"fmt"
	"math"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// EgressCounters reads what has left end e's veth since New, counted at
// its egress hook; bytes include the Ethernet header.
func (in *Instruments) EgressCounters(e End) (EgressCounters, error) {
	l := in.l
	if err := e.valid(); err != nil {
		return EgressCounters{}, err
	}
	if l.counters[e] == nil {
		return EgressCounters{}, noEgressHook("EgressCounters", e)
	}
	return l.counters[e].read()
}

// BlockUDP drops every UDP packet (IPv4 or IPv6) leaving end e and counts
// them; use it to make QUIC fail and measure a fallback to TCP.
func (c *Control) BlockUDP(e End) (*Filter, error) {
	l := c.l
	if err := e.valid(); err != nil {
		return nil, err
	}
	if l.counters[e] == nil {
		return nil, noEgressHook("BlockUDP", e)
	}
	return l.counters[e].addFilter("blockudp", fmt.Sprintf("drop udp on %s %s", e, l.dev(e)), []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_UDP}},
	})
}

// randomDropScale is the resolution of DropRandom: numgen draws from
// [0, randomDropScale), so percentages resolve to 0.01%.
const randomDropScale = 10000

// DropRandom drops each packet leaving end e, ARP included, with
// probability pct percent (resolution 0.01%), and counts what it dropped.
func (c *Control) DropRandom(e End, pct float64) (*Filter, error) {
	l := c.l
	if err := e.valid(); err != nil {
		return nil, err
	}
	if l.counters[e] == nil {
		return nil, noEgressHook("DropRandom", e)
	}
	if math.IsNaN(pct) || pct <= 0 || pct > 100 {
		return nil, fmt.Errorf("shapedlink: DropRandom percentage %v must satisfy 0 < pct <= 100", pct)
	}
	threshold := uint32(math.Round(pct / 100 * randomDropScale))
	if threshold == 0 {
		return nil, fmt.Errorf("shapedlink: DropRandom percentage %v is below the 0.01%% resolution", pct)
	}
	// numgen leaves a host-order u32 in the register; cmp lt compares
	// bytes, most significant first, so convert the register to network
	// order and compare against a big-endian constant.
	return l.counters[e].addFilter("droprandom", fmt.Sprintf("drop %s%% at random on %s %s", fmtNum(pct), e, l.dev(e)), []expr.Any{
		&expr.Numgen{Register: 1, Type: unix.NFT_NG_RANDOM, Modulus: randomDropScale},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: be32(threshold)},
	})
}
