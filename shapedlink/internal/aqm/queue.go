package aqm

import "strconv"

// Packet is what the queue holds for one frame. The queue never looks at
// the frame itself: Len, Flow and ECT are what the caller extracted from
// it (see Classify), and Ref is the caller's handle to find the frame
// again (a slot in its own buffer ring, say).
type Packet struct {
	// Len is the packet length in bytes as the link counts it (for the
	// emulator, the whole Ethernet frame). It drives the byte backlog,
	// CoDel's mtu rule, FQCoDel's deficit round robin and its memory
	// limit. Enqueue treats a negative Len as 0 and one over maxLen as
	// maxLen.
	Len int
	// Flow is the packet's flow hash; FQCoDel puts it in queue
	// Flow % Flows. FIFO and CoDel ignore it.
	Flow uint32
	// ECT says the packet is ECN-capable (its ECN field is ECT(0), ECT(1)
	// or already CE), so that with Config.ECN CoDel marks it instead of
	// dropping it.
	ECT bool
	// Ref is the caller's handle, returned untouched.
	Ref int64
	// Tag is a second word of the caller's, returned untouched (the link
	// model keeps what it decided to do to the frame's bytes there).
	Tag uint64

	enq int64 // the now passed to Enqueue
}

// EnqueuedAt is the time Enqueue was called with for p; a dequeued
// packet's sojourn time is the dequeue time minus this.
func (p Packet) EnqueuedAt() int64 { return p.enq }

// Cause is why a packet was dropped.
type Cause uint8

const (
	// overlimit: the queue was full at enqueue, by Limit or, for FQCoDel,
	// by MemoryLimit. FIFO and CoDel drop the arrival; FQCoDel drops from
	// the head of the fattest flow, which may be the arrival itself.
	overlimit Cause = iota + 1
	// CoDelDrop: CoDel dropped the packet at dequeue because the queue's
	// delay stayed above Target.
	CoDelDrop
)

func (c Cause) String() string {
	switch c {
	case overlimit:
		return "overlimit"
	case CoDelDrop:
		return "codel"
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// Stats are a Queue's counters since New. Every arrival is accounted
// for: Arrivals = Dequeued + OverlimitDrops + CoDelDrops + packets still
// queued.
type Stats struct {
	Arrivals       uint64 // Enqueue calls
	Dequeued       uint64 // packets Dequeue returned (marked ones included)
	OverlimitDrops uint64 // drops with Cause Overlimit
	// OverMemoryDrops counts the OverlimitDrops made while FQCoDel was
	// over MemoryLimit (tc's drop_overmemory; the kernel counts them in
	// drop_overlimit too).
	OverMemoryDrops uint64
	CoDelDrops      uint64 // drops with Cause CoDelDrop
	Marks           uint64 // packets Dequeue returned with marked set
	// NewFlows counts the times FQCoDel put a flow queue on its list of
	// new flows (tc's new_flow_count).
	NewFlows uint64
	// NewFlowsLen and OldFlowsLen are how many flow queues are on
	// FQCoDel's new and old lists now (tc's new_flows_len and
	// old_flows_len); a queue can be on a list while empty.
	NewFlowsLen, OldFlowsLen int
}

// FlowBacklog is one non-empty flow queue.
type FlowBacklog struct {
	Index   int // flow queue index, Flow % Flows (always 0 for FIFO and CoDel)
	Packets int
	Bytes   int64
}

// none marks an empty link in the index-linked lists.
const none = -1

// node is a slot of the preallocated packet pool; next links it into a
// flow queue or the free list.
type node struct {
	p    Packet
	next int32
}

// flow is one FIFO of packets with its CoDel state; FIFO and CoDel use
// flows[0] only.
type flow struct {
	head, tail int32 // nodes; none when empty
	packets    int32
	onList     bool  // on FQCoDel's new or old list
	link       int32 // next flow on that list
	deficit    int
	cv         codelVars
}

// flowList is FQCoDel's new or old list: a FIFO of flow indexes linked
// through flow.link.
type flowList struct {
	head, tail int32
	n          int
}

func (l *flowList) empty() bool { return l.head == none }

func (l *flowList) pushTail(flows []flow, i int32) {
	flows[i].link = none
	if l.tail == none {
		l.head = i
	} else {
		flows[l.tail].link = i
	}
	l.tail = i
	l.n++
}

func (l *flowList) popHead(flows []flow) int32 {
	i := l.head
	l.head = flows[i].link
	if l.head == none {
		l.tail = none
	}
	flows[i].link = none
	l.n--
	return i
}

// Queue is one bottleneck queue under a discipline. It keeps no clock:
// every call takes now, in nanoseconds on any monotonic scale, and the
// calls must come in non-decreasing now. A Queue is not safe for
// concurrent use, and the onDrop callback must not call back into it.
type Queue struct {
	kind      Kind
	onDrop    func(Packet, Cause)
	limit     int
	target    int64
	interval  int64
	ecn       bool
	nflows    uint32
	quantum   int
	memLimit  int64
	dropBatch int

	nodes    []node
	free     int32 // head of the free list of nodes
	flows    []flow
	backlogs []int64 // bytes per flow, apart so fatDrop scans it quickly
	newFlows flowList
	oldFlows flowList

	packets int
	bytes   int64
	stats   Stats
}

// New returns an empty queue for c (after c.WithDefaults), with its
// packet pool allocated: Limit packets (Limit+1 for FQCoDel, which
// queues an arrival before it drops). onDrop, if not nil, is called for
// every dropped packet, from inside Enqueue or Dequeue, with the packet
// already out of the queue.
func New(c Config, onDrop func(p Packet, c Cause)) (*Queue, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	q := &Queue{
		kind:      c.Kind,
		onDrop:    onDrop,
		limit:     c.Limit,
		target:    int64(c.Target),
		interval:  int64(c.Interval),
		ecn:       c.ECN && c.Kind != FIFO,
		nflows:    1,
		quantum:   c.Quantum,
		memLimit:  c.MemoryLimit,
		dropBatch: c.DropBatch,
	}
	pool := c.Limit
	if c.Kind == FQCoDel {
		q.nflows = uint32(c.Flows)
		pool++
	}
	q.nodes = make([]node, pool)
	for i := range q.nodes {
		q.nodes[i].next = int32(i + 1)
	}
	q.nodes[pool-1].next = none
	q.free = 0
	q.flows = make([]flow, q.nflows)
	for i := range q.flows {
		q.flows[i] = flow{head: none, tail: none, link: none}
	}
	q.backlogs = make([]int64, q.nflows)
	q.newFlows = flowList{head: none, tail: none}
	q.oldFlows = flowList{head: none, tail: none}
	return q, nil
}

// Len is the number of packets and bytes queued.
func (q *Queue) Len() (packets int, bytes int64) { return q.packets, q.bytes }

// Stats returns the counters.
func (q *Queue) Stats() Stats {
	s := q.stats
	s.NewFlowsLen = q.newFlows.n
	s.OldFlowsLen = q.oldFlows.n
	return s
}

// FlowBacklogs stores the non-empty flow queues, in index order, in
// dst[:0] (reusing its storage) and returns it. FIFO and CoDel have one
// queue, index 0. It scans every flow queue, so it is meant for periodic
// occupancy samples, not for each packet.
func (q *Queue) FlowBacklogs(dst []FlowBacklog) []FlowBacklog {
	dst = dst[:0]
	for i := range q.flows {
		if n := q.flows[i].packets; n > 0 {
			dst = append(dst, FlowBacklog{Index: i, Packets: int(n), Bytes: q.backlogs[i]})
		}
	}
	return dst
}

// Enqueue adds p, arriving at now, to the tail of its queue, dropping
// (and reporting to onDrop) whatever the discipline drops on arrival:
// for FIFO and CoDel the arrival itself when Limit packets are queued;
// for FQCoDel, when the total goes over Limit or the bytes over
// MemoryLimit, packets from the head of the flow queue with the most
// bytes, up to half its bytes and at most DropBatch packets, which can
// include p when p's queue is the fattest.
func (q *Queue) Enqueue(now int64, p Packet) {
	q.stats.Arrivals++
	if p.Len < 0 {
		p.Len = 0
	} else if p.Len > maxLen {
		p.Len = maxLen
	}
	p.enq = now
	if q.kind != FQCoDel {
		if q.packets >= q.limit || q.free == none {
			q.drop(p, overlimit)
			return
		}
		q.push(0, p)
		return
	}
	if q.free == none {
		// Cannot happen: the pool holds Limit+1 packets and every
		// arrival over Limit drops at least one.
		q.drop(p, overlimit)
		return
	}
	i := int32(p.Flow % q.nflows)
	q.push(i, p)
	if f := &q.flows[i]; !f.onList {
		f.onList = true
		f.deficit = q.quantum
		q.newFlows.pushTail(q.flows, i)
		q.stats.NewFlows++
	}
	overMemory := q.bytes > q.memLimit
	if q.packets <= q.limit && !overMemory {
		return
	}
	q.fatDrop(i, overMemory)
}

// fatDrop is sch_fq_codel's overlimit policy: find the flow queue with
// the most bytes and drop from its head until half of those bytes are
// gone or DropBatch packets have been dropped, and raise that flow's
// CoDel count by the number dropped, so that its CoDel, when it next
// starts dropping, starts harder. fallback is a non-empty queue to use
// should every queue hold zero bytes.
func (q *Queue) fatDrop(fallback int32, overMemory bool) {
	fat, most := fallback, int64(0)
	for i, b := range q.backlogs {
		if b > most {
			fat, most = int32(i), b
		}
	}
	f := &q.flows[fat]
	half := most / 2
	var gone int64
	n := 0
	for f.packets > 0 {
		p := q.pop(fat)
		gone += int64(p.Len)
		n++
		if overMemory {
			q.stats.OverMemoryDrops++
		}
		q.drop(p, overlimit)
		if n >= q.dropBatch || gone >= half {
			break
		}
	}
	f.cv.count += uint32(n)
}

// Dequeue removes and returns the packet to send at now. ok is false
// when the queue is empty (after any drops). For CoDel and FQCoDel the
// CoDel decision is made here: packets it drops go to onDrop and are not
// returned, and marked says the returned packet is to have its ECN field
// set to CE (see SetCE) instead of having been dropped.
func (q *Queue) Dequeue(now int64) (p Packet, marked bool, ok bool) {
	switch q.kind {
	case FIFO:
		if q.packets == 0 {
			return Packet{}, false, false
		}
		p, ok = q.pop(0), true
	case CoDel:
		p, marked, ok = q.codelDequeue(0, now)
	default:
		p, marked, ok = q.fqDequeue(now)
	}
	if ok {
		q.stats.Dequeued++
		if marked {
			q.stats.Marks++
		}
	}
	return p, marked, ok
}

// fqDequeue is RFC 8290's scheduler as sch_fq_codel runs it: serve the
// first flow queue on the new list, or else the old list; a queue whose
// deficit is spent gets a quantum more and goes to the tail of the old
// list; a queue that CoDel finds empty leaves the new list for the tail
// of the old list when the old list has queues (so a flow that keeps
// going empty and coming back cannot stay ahead of the old flows), and
// otherwise leaves the lists.
func (q *Queue) fqDequeue(now int64) (Packet, bool, bool) {
	for {
		l, fromNew := &q.newFlows, true
		if l.empty() {
			l, fromNew = &q.oldFlows, false
			if l.empty() {
				return Packet{}, false, false
			}
		}
		i := l.head
		f := &q.flows[i]
		if f.deficit <= 0 {
			f.deficit += q.quantum
			l.popHead(q.flows)
			q.oldFlows.pushTail(q.flows, i)
			continue
		}
		p, marked, ok := q.codelDequeue(i, now)
		if !ok {
			l.popHead(q.flows)
			if fromNew && !q.oldFlows.empty() {
				q.oldFlows.pushTail(q.flows, i)
			} else {
				f.onList = false
			}
			continue
		}
		f.deficit -= p.Len
		return p, marked, true
	}
}

// push appends p to flow queue i; the caller has checked there is a free
// node.
func (q *Queue) push(i int32, p Packet) {
	n := q.free
	q.free = q.nodes[n].next
	q.nodes[n] = node{p: p, next: none}
	f := &q.flows[i]
	if f.tail == none {
		f.head = n
	} else {
		q.nodes[f.tail].next = n
	}
	f.tail = n
	f.packets++
	q.backlogs[i] += int64(p.Len)
	q.packets++
	q.bytes += int64(p.Len)
}

// pop removes the head of the non-empty flow queue i.
func (q *Queue) pop(i int32) Packet {
	f := &q.flows[i]
	n := f.head
	nd := &q.nodes[n]
	p := nd.p
	f.head = nd.next
	if f.head == none {
		f.tail = none
	}
	nd.next = q.free
	q.free = n
	f.packets--
	q.backlogs[i] -= int64(p.Len)
	q.packets--
	q.bytes -= int64(p.Len)
	return p
}

// drop counts p (already out of the queue, or never in it) and reports
// it.
func (q *Queue) drop(p Packet, c Cause) {
	if c == overlimit {
		q.stats.OverlimitDrops++
	} else {
		q.stats.CoDelDrops++
	}
	if q.onDrop != nil {
		q.onDrop(p, c)
	}
}
