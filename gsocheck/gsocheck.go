package gsocheck

import (
	"fmt"
	"slices"
	"time"
)

// Header sizes used by Expected.
const (
	udpHeader  = 8
	ipv4Header = 20
	// VethL2 is the link-layer overhead a veth's qdisc counts per packet
	// (the Ethernet header).
	VethL2 = 14
)

// DefaultMinSamples is how many samples with at least two packets queued
// FromQueue needs before it will say on or off.
const DefaultMinSamples = 10

// DefaultTornFraction is the share of occupied samples that may read above
// one datagram per slot, by at most one datagram's bytes, before FromQueue
// calls it on. See FromQueue for why any may.
const DefaultTornFraction = 0.02

// Verdict is the outcome of a check.
type Verdict string

const (
	Off          Verdict = "off"
	On           Verdict = "on"
	Inconclusive Verdict = "inconclusive"
)

// Expected returns the bytes one datagram occupies in a queue: the UDP
// payload plus 8 (UDP), 20 (IPv4) and the link-layer overhead.
func Expected(datagram, l2overhead int) int {
	return datagram + udpHeader + ipv4Header + l2overhead
}

// Sample is one reading of a queue: when, and how many packets and bytes it
// held at that instant.
type Sample struct {
	At      time.Time `json:"at"`
	Packets int       `json:"packets"`
	Bytes   int       `json:"bytes"`
}

// Result is the outcome of FromQueue or FromCounters.
type Result struct {
	Verdict  Verdict `json:"verdict"`
	Reason   string  `json:"reason"`
	Expected int     `json:"expected_bytes_per_slot"`
	// Used is the number of samples with at least two packets queued, out
	// of Total.
	Used  int `json:"used"`
	Total int `json:"total"`
	// PooledMean is the total bytes over total packets of the used samples;
	// Median and Max are over the used samples' own bytes per slot.
	PooledMean float64 `json:"pooled_mean"`
	Median     float64 `json:"median"`
	Max        float64 `json:"max"`
	// AboveOne counts used samples whose bytes per slot exceeded Expected;
	// BeyondTear those whose bytes exceeded (packets+1)*Expected, which no
	// torn read can produce.
	AboveOne   int `json:"above_one"`
	BeyondTear int `json:"beyond_tear"`
	// Oversize is, for FromCounters, the count of packets longer than one
	// wire packet.
	Oversize uint64 `json:"oversize,omitempty"`
}

// Options tune FromQueue. The zero value uses DefaultMinSamples and
// DefaultTornFraction.
type Options struct {
	MinSamples int
	// TornFraction is the share of occupied samples allowed above one
	// datagram per slot (by less than one datagram) before the verdict is
	// on. Zero means DefaultTornFraction; negative means none is allowed.
	TornFraction float64
}

// FromQueue checks queue samples against the expected bytes per slot. It
// returns an error only for unusable input (a non-positive expected size,
// or a sample with negative counts); too little data is Inconclusive. The
// verdict is On when any occupied sample held more than
// (packets+1)*expected bytes, or more than TornFraction of them held more
// than packets*expected; Off when neither, given MinSamples occupied
// samples. The allowance is for samples whose packet and byte counts the
// kernel read at different moments (docs/shapedlink.md, "Segmentation
// offload"). Max reports the raw maximum, tears included.
func FromQueue(samples []Sample, expected int, opts Options) (Result, error) {
	if expected <= 0 {
		return Result{}, fmt.Errorf("gsocheck: expected bytes per slot %d must be positive; use Expected(datagram, l2overhead)", expected)
	}
	minSamples := opts.MinSamples
	if minSamples < 0 {
		return Result{}, fmt.Errorf("gsocheck: MinSamples %d is negative", minSamples)
	}
	if minSamples == 0 {
		minSamples = DefaultMinSamples
	}
	r := Result{Expected: expected, Total: len(samples)}
	var bytes, packets int64
	perSlot := make([]float64, 0, len(samples))
	for i, s := range samples {
		if s.Packets < 0 || s.Bytes < 0 {
			return Result{}, fmt.Errorf("gsocheck: sample %d has negative counts (%d packets, %d bytes)", i, s.Packets, s.Bytes)
		}
		if s.Packets < 2 {
			continue
		}
		bytes += int64(s.Bytes)
		packets += int64(s.Packets)
		if s.Bytes > s.Packets*expected {
			r.AboveOne++
		}
		if s.Bytes > (s.Packets+1)*expected {
			r.BeyondTear++
		}
		perSlot = append(perSlot, float64(s.Bytes)/float64(s.Packets))
	}
	r.Used = len(perSlot)
	if r.Used > 0 {
		r.PooledMean = float64(bytes) / float64(packets)
		slices.Sort(perSlot)
		n := len(perSlot)
		if n%2 == 1 {
			r.Median = perSlot[n/2]
		} else {
			r.Median = (perSlot[n/2-1] + perSlot[n/2]) / 2
		}
		r.Max = perSlot[n-1]
	}
	torn := opts.TornFraction
	if torn == 0 {
		torn = DefaultTornFraction
	}
	tornLimit := max(torn, 0) * float64(r.Used)
	switch {
	case r.BeyondTear > 0:
		// A super-packet, however few samples there are.
		r.Verdict = On
		r.Reason = fmt.Sprintf("%d samples held more than one datagram per slot plus one datagram (max %.0f bytes per slot against %d): "+
			"writes were segmented after the queue", r.BeyondTear, r.Max, expected)
	case float64(r.AboveOne) > tornLimit:
		r.Verdict = On
		r.Reason = fmt.Sprintf("%d of %d occupied samples held more than %d bytes per slot, more than torn reads explain (%.0f%% allowed)",
			r.AboveOne, r.Used, expected, 100*max(torn, 0))
	case r.Used < minSamples:
		r.Verdict = Inconclusive
		r.Reason = fmt.Sprintf("only %d of %d samples had two or more packets queued; need %d", r.Used, r.Total, minSamples)
	default:
		r.Verdict = Off
		r.Reason = fmt.Sprintf("no slot above %d bytes beyond torn reads in %d occupied samples (%d read high; max %.0f, median %.1f, pooled mean %.1f)",
			expected, r.Used, r.AboveOne, r.Max, r.Median, r.PooledMean)
	}
	return r, nil
}

// Counters are packet counters taken where a qdisc would see packets: all
// packets and bytes, and the packets longer than one wire packet.
type Counters struct {
	Packets  uint64 `json:"packets"`
	Bytes    uint64 `json:"bytes"`
	Oversize uint64 `json:"oversize"`
}

// FromCounters checks egress counters. Any oversize packet means On; with at
// least minPackets packets and none oversize, Off; otherwise Inconclusive.
// expected is reported as the size one datagram should take.
func FromCounters(c Counters, expected int, minPackets uint64) Result {
	r := Result{Expected: expected, Oversize: c.Oversize, Total: int(c.Packets), Used: int(c.Packets)}
	if c.Packets > 0 {
		r.PooledMean = float64(c.Bytes) / float64(c.Packets)
	}
	switch {
	case c.Oversize > 0:
		r.Verdict = On
		r.Reason = fmt.Sprintf("%d of %d packets were longer than one wire packet before segmentation", c.Oversize, c.Packets)
	case c.Packets < minPackets:
		r.Verdict = Inconclusive
		r.Reason = fmt.Sprintf("only %d packets counted; need %d", c.Packets, minPackets)
	default:
		r.Verdict = Off
		r.Reason = fmt.Sprintf("none of %d packets was longer than one wire packet", c.Packets)
	}
	return r
}
