package vmtest

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// netemParams is what one direction of a profile must look like in the kernel's
// netem qdisc, in the units tc reports: the one-way delay, the rate in bytes
// per second, the packet limit and the loss probability.
type netemParams struct {
	Delay     time.Duration // one-way delay: RTT/2
	RateBytes uint64        // bytes per second: rate_mbit * 10^6 / 8
	Limit     uint32        // packets, counted by netem over queue and delay line
	LossPct   float64       // percent; 0 means netem must carry no loss term at all
}

// expectNetem computes, from a profile string in the grammar
// rtt_ms:rate_mbit[:loss_pct][@limit_pkts], the netem parameters one
// direction of the link must carry. It is written independently of package
// shapedlink, from the project's definitions: delay is RTT/2 per direction,
// rate is in Mbit/s of 10^6 bits, loss is applied per direction, and the
// default limit is ceil(1.5 * rate * rtt / (8 * 1500)) + 10 packets, which
// simplifies to ceil(rate_mbit * rtt_ms / 8) + 10 and is computed here with
// exact rational arithmetic (110 for 80:10, 48 for 150:2).
//
// The VM tests compare what the kernel reports back against these values,
// so a wrong conversion inside shapedlink cannot agree with itself.
func expectNetem(profile string) (netemParams, error) {
	body, limitStr, hasLimit := strings.Cut(profile, "@")
	fields := strings.Split(body, ":")
	if len(fields) < 2 || len(fields) > 3 {
		return netemParams{}, fmt.Errorf("vmtest: profile %q: want rtt_ms:rate_mbit[:loss_pct][@limit_pkts]", profile)
	}
	rtt, ok := new(big.Rat).SetString(fields[0])
	if !ok || rtt.Sign() <= 0 {
		return netemParams{}, fmt.Errorf("vmtest: profile %q: rtt_ms %q is not a positive decimal", profile, fields[0])
	}
	rate, ok := new(big.Rat).SetString(fields[1])
	if !ok || rate.Sign() <= 0 {
		return netemParams{}, fmt.Errorf("vmtest: profile %q: rate_mbit %q is not a positive decimal", profile, fields[1])
	}
	var n netemParams
	if len(fields) == 3 {
		loss, ok := new(big.Rat).SetString(fields[2])
		if !ok || loss.Sign() < 0 || loss.Cmp(big.NewRat(100, 1)) >= 0 {
			return netemParams{}, fmt.Errorf("vmtest: profile %q: loss_pct %q is not a decimal in [0, 100)", profile, fields[2])
		}
		n.LossPct, _ = loss.Float64()
	}
	// One-way delay in nanoseconds: rtt_ms * 10^6 / 2.
	delayNs := new(big.Rat).Mul(rtt, big.NewRat(1_000_000, 2))
	if !delayNs.IsInt() {
		return netemParams{}, fmt.Errorf("vmtest: profile %q: half the RTT is not a whole number of nanoseconds", profile)
	}
	n.Delay = time.Duration(delayNs.Num().Int64())
	// Bytes per second: rate_mbit * 10^6 / 8.
	bps := new(big.Rat).Mul(rate, big.NewRat(1_000_000, 8))
	if !bps.IsInt() {
		return netemParams{}, fmt.Errorf("vmtest: profile %q: the rate is not a whole number of bytes per second", profile)
	}
	n.RateBytes = bps.Num().Uint64()
	if hasLimit {
		var l uint32
		if _, err := fmt.Sscanf(limitStr, "%d", &l); err != nil || l == 0 || fmt.Sprint(l) != limitStr {
			return netemParams{}, fmt.Errorf("vmtest: profile %q: limit_pkts %q is not a positive integer", profile, limitStr)
		}
		n.Limit = l
	} else {
		// ceil(rate * rtt / 8) + 10
		q := new(big.Rat).Mul(rate, rtt)
		q.Quo(q, big.NewRat(8, 1))
		c := new(big.Int).Quo(q.Num(), q.Denom())
		if new(big.Rat).SetInt(c).Cmp(q) < 0 {
			c.Add(c, big.NewInt(1))
		}
		if !c.IsInt64() || c.Int64()+10 > math.MaxUint32 {
			return netemParams{}, fmt.Errorf("vmtest: profile %q: default limit overflows 32 bits", profile)
		}
		n.Limit = uint32(c.Int64() + 10)
	}
	return n, nil
}

// lossFraction converts a loss percentage into the 32-bit probability netem
// stores (0 never drops, 2^32-1 always drops), the value the kernel reports
// back in tc_netem_qopt.loss.
func lossFraction(pct float64) uint32 {
	return uint32(math.Round(pct / 100 * math.MaxUint32))
}
