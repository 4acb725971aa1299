package aqm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is a queue discipline.
type Kind uint8

const (
	// FIFO is drop-tail: an arrival that finds Limit packets queued is
	// dropped (tc's pfifo). It is the zero Kind, so a zero Config keeps
	// the emulator's plain netem-like queue.
	FIFO Kind = iota
	// CoDel is one drop-tail FIFO of Limit packets managed by CoDel at
	// dequeue (RFC 8289; tc's codel).
	CoDel
	// FQCoDel is flow queueing with a CoDel per flow queue (RFC 8290;
	// tc's fq_codel).
	FQCoDel
)

// String returns the tc name of k: "fifo", "codel" or "fq_codel".
func (k Kind) String() string {
	switch k {
	case FIFO:
		return "fifo"
	case CoDel:
		return "codel"
	case FQCoDel:
		return "fq_codel"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind is the inverse of Kind.String. It ignores case and
// surrounding spaces, and also accepts "fq-codel" and "fqcodel".
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fifo":
		return FIFO, nil
	case "codel":
		return CoDel, nil
	case "fq_codel", "fq-codel", "fqcodel":
		return FQCoDel, nil
	}
	return 0, fmt.Errorf("aqm: unknown queue discipline %q; it must be fifo, codel or fq_codel", s)
}

// MarshalText encodes k as its name, so a Config travels as JSON with
// "Kind": "fq_codel".
func (k Kind) MarshalText() ([]byte, error) {
	if k > FQCoDel {
		return nil, fmt.Errorf("aqm: cannot encode unknown %v", k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText decodes a name accepted by ParseKind.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Defaults, as tc's codel and fq_codel have them on an Ethernet device.
const (
	defaultTarget       = 5 * time.Millisecond
	defaultInterval     = 100 * time.Millisecond
	DefaultFlows        = 1024
	defaultQuantum      = 1514
	defaultMemoryLimit  = 32 << 20
	defaultDropBatch    = 64
	defaultLimitFIFO    = 1000  // pfifo takes the device's txqueuelen, 1000 on veth
	defaultLimitCoDel   = 1000  // sch_codel's default limit
	defaultLimitFQCoDel = 10240 // sch_fq_codel's default limit
)

// mtu is the backlog, in bytes, at or below which CoDel never drops or
// marks, however long the head packet waited: with no more than one
// full-size packet queued, dropping cannot shorten the queue. Linux sets
// it to psched_mtu of the device, the mtu plus the link-layer header,
// which is 1514 on an Ethernet (or veth) device with the usual mtu of
// 1500; this package fixes it at that value.
const mtu = 1514

// Bounds checked by Config.Validate.
const (
	MaxLimit       = 1 << 20 // packets, as the emulator's own limit
	minDuration    = time.Microsecond
	maxDuration    = time.Hour
	maxFlows       = 65536   // sch_fq_codel refuses more
	minQuantum     = 256     // sch_fq_codel raises anything smaller to this
	maxQuantum     = 1 << 20 // sch_fq_codel refuses more
	maxMemoryLimit = 1 << 31 // sch_fq_codel caps memory_limit here
	// maxLen is the largest packet length the queue accounts; Enqueue
	// treats a longer Len as maxLen (and a negative one as 0). Frames the
	// emulator sees are at most 64 KiB plus headers.
	maxLen = 1 << 17
)

// Config is a queue discipline and its parameters. Fields that do not
// apply to Kind are ignored (and not validated). A zero field means its
// default; see WithDefaults.
type Config struct {
	Kind Kind
	// Limit is the most packets queued. For FIFO and CoDel an arrival
	// that finds Limit packets queued is dropped; for FQCoDel it is the
	// total over all flow queues, as tc's fq_codel limit, and the arrival
	// is queued first and then packets are dropped from the fattest flow.
	// The default depends on Kind (1000, 1000, 10240).
	Limit int
	// Target is CoDel's acceptable standing queue delay (default 5ms).
	Target time.Duration
	// Interval is CoDel's sliding window, roughly a worst-case round
	// trip (default 100ms).
	Interval time.Duration
	// ECN makes CoDel mark ECN-capable packets (Packet.ECT) with CE
	// instead of dropping them; other packets are still dropped. Unlike
	// tc, where fq_codel has ecn on by default and codel off, it is off
	// unless set, for every Kind.
	ECN bool
	// Flows is the number of FQCoDel flow queues (default 1024); a
	// packet goes to queue Packet.Flow % Flows.
	Flows int
	// Quantum is FQCoDel's deficit round robin quantum in bytes (default
	// 1514).
	Quantum int
	// MemoryLimit bounds the bytes FQCoDel holds (default 32 MiB); going
	// over it drops from the fattest flow, as going over Limit does. The
	// kernel counts each packet's buffer truesize; this package counts
	// Packet.Len, so the limit binds later than in the kernel.
	MemoryLimit int64
	// DropBatch is the most packets FQCoDel drops from the fattest flow
	// for one arrival over the limit (default 64).
	DropBatch int
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Limit == 0 {
		switch c.Kind {
		case CoDel:
			c.Limit = defaultLimitCoDel
		case FQCoDel:
			c.Limit = defaultLimitFQCoDel
		default:
			c.Limit = defaultLimitFIFO
		}
	}
	if c.Target == 0 {
		c.Target = defaultTarget
	}
	if c.Interval == 0 {
		c.Interval = defaultInterval
	}
	if c.Flows == 0 {
		c.Flows = DefaultFlows
	}
	if c.Quantum == 0 {
		c.Quantum = defaultQuantum
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = defaultMemoryLimit
	}
	if c.DropBatch == 0 {
		c.DropBatch = defaultDropBatch
	}
	return c
}

// Validate reports the first thing wrong with c, naming the field and
// its allowed range. It does not apply defaults: call it on
// c.WithDefaults() (New does).
func (c Config) Validate() error {
	if c.Kind > FQCoDel {
		return fmt.Errorf("aqm: Config.Kind is %v; it must be fifo, codel or fq_codel", c.Kind)
	}
	if c.Limit < 1 || c.Limit > MaxLimit {
		return fmt.Errorf("aqm: Config.Limit is %d; it must be between 1 and %d packets", c.Limit, MaxLimit)
	}
	if c.Kind == FIFO {
		return nil
	}
	if c.Target < minDuration || c.Target > maxDuration {
		return fmt.Errorf("aqm: Config.Target is %v; it must be between %v and %v", c.Target, minDuration, maxDuration)
	}
	if c.Interval < minDuration || c.Interval > maxDuration {
		return fmt.Errorf("aqm: Config.Interval is %v; it must be between %v and %v", c.Interval, minDuration, maxDuration)
	}
	if c.Kind == CoDel {
		return nil
	}
	if c.Flows < 1 || c.Flows > maxFlows {
		return fmt.Errorf("aqm: Config.Flows is %d; it must be between 1 and %d", c.Flows, maxFlows)
	}
	if c.Quantum < minQuantum || c.Quantum > maxQuantum {
		return fmt.Errorf("aqm: Config.Quantum is %d; it must be between %d and %d bytes", c.Quantum, minQuantum, maxQuantum)
	}
	if c.MemoryLimit < 1 || c.MemoryLimit > maxMemoryLimit {
		return fmt.Errorf("aqm: Config.MemoryLimit is %d; it must be between 1 and %d bytes", c.MemoryLimit, int64(maxMemoryLimit))
	}
	if c.DropBatch < 1 || c.DropBatch > MaxLimit {
		return fmt.Errorf("aqm: Config.DropBatch is %d; it must be between 1 and %d packets", c.DropBatch, MaxLimit)
	}
	return nil
}

// Describe renders c (after defaults) as a tc-like line, for example
// "fq_codel limit 10240 flows 1024 quantum 1514 target 5ms interval 100ms
// memory_limit 33554432 drop_batch 64 ecn". Parameters that do not apply
// to the Kind are left out.
func (c Config) Describe() string {
	c = c.WithDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "%v limit %d", c.Kind, c.Limit)
	if c.Kind == FQCoDel {
		fmt.Fprintf(&b, " flows %d quantum %d", c.Flows, c.Quantum)
	}
	if c.Kind != FIFO {
		fmt.Fprintf(&b, " target %v interval %v", c.Target, c.Interval)
	}
	if c.Kind == FQCoDel {
		fmt.Fprintf(&b, " memory_limit %d drop_batch %d", c.MemoryLimit, c.DropBatch)
	}
	if c.Kind != FIFO && c.ECN {
		b.WriteString(" ecn")
	}
	return b.String()
}
