package shapedlink

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// tablePrefix starts the name of every nftables table this package
// creates: tablePrefix, the creating process's id, "_", a counter.
const tablePrefix = "quicbench_"

// tableSeq numbers tables within this process. Together with the pid it
// makes table names unique; it is an identifier source, not shared state.
var tableSeq atomic.Uint64

func newTableName() string {
	return fmt.Sprintf("%s%d_%d", tablePrefix, os.Getpid(), tableSeq.Add(1))
}

// Chain priorities on the egress hook: the counting chain sees every
// packet offered to the device before any filter drops it.
const (
	prioCount  = -200
	prioFilter = 0
)

const (
	nftObjectCounter = 1 // NFT_OBJECT_COUNTER
	egressCounter    = "egress"
	oversizeCounter  = "oversize"
)

// nftConn opens an nftables connection inside ns. The descriptor is
// duplicated so the connection does not depend on the namespace staying
// open in this package.
func nftConn(ns *Namespace) (*nftables.Conn, func(), error) {
	fd, err := ns.dupFd()
	if err != nil {
		return nil, nil, err
	}
	c, err := nftables.New(nftables.WithNetNSFd(fd))
	if err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("shapedlink: opening nftables in the %s namespace: %w", ns.role, err)
	}
	return c, func() { unix.Close(fd) }, nil
}

// nftCounters is the per-end netdev table holding the egress counting
// chain; filters add their own chains to it.
type nftCounters struct {
	ns    *Namespace
	dev   string
	table *nftables.Table
	mu    sync.Mutex
	seq   int
}

func newNftCounters(ns *Namespace, dev string) (*nftCounters, error) {
	c, done, err := nftConn(ns)
	if err != nil {
		return nil, err
	}
	defer done()
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyNetdev, Name: newTableName()})
	for _, name := range []string{egressCounter, oversizeCounter} {
		c.AddObj(&nftables.CounterObj{Table: t, Name: name})
	}
	ch := c.AddChain(&nftables.Chain{
		Name: "count", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookEgress, Priority: nftables.ChainPriorityRef(prioCount), Device: dev,
	})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Objref{Type: nftObjectCounter, Name: egressCounter},
	}})
	// meta len > MTU + 14: longer than one wire packet. meta len is a
	// host-order u32, and cmp gt compares bytes as big-endian numbers, so
	// convert the register to network order first.
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyLEN, Register: 1},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpGt, Register: 1, Data: be32(wirePacketSize)},
		&expr.Objref{Type: nftObjectCounter, Name: oversizeCounter},
	}})
	if err := c.Flush(); err != nil {
		return nil, fmt.Errorf("shapedlink: installing the egress counters on %s (nftables netdev egress hook): %w", dev, err)
	}
	return &nftCounters{ns: ns, dev: dev, table: t}, nil
}

func be32(v uint32) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return b[:]
}

func readCounter(c *nftables.Conn, t *nftables.Table, name string) (Counter, error) {
	o, err := c.GetObject(&nftables.CounterObj{Table: t, Name: name})
	if err != nil {
		return Counter{}, fmt.Errorf("shapedlink: reading nftables counter %s/%s: %w", t.Name, name, err)
	}
	co, ok := o.(*nftables.CounterObj)
	if !ok {
		return Counter{}, fmt.Errorf("shapedlink: nftables object %s/%s is a %T, not a counter", t.Name, name, o)
	}
	return Counter{Packets: co.Packets, Bytes: co.Bytes}, nil
}

func (n *nftCounters) read() (EgressCounters, error) {
	c, done, err := nftConn(n.ns)
	if err != nil {
		return EgressCounters{}, err
	}
	defer done()
	var out EgressCounters
	if out.All, err = readCounter(c, n.table, egressCounter); err != nil {
		return out, err
	}
	out.Oversize, err = readCounter(c, n.table, oversizeCounter)
	return out, err
}

// Filter is an nftables rule on one end's egress hook that drops packets
// and counts what it dropped.
type Filter struct {
	what    string
	nc      *nftCounters
	chain   *nftables.Chain
	counter string
	mu      sync.Mutex
	removed bool
}

// String says what the filter does, e.g. "drop udp on server qbsrv0".
func (f *Filter) String() string { return f.what }

// Dropped reads how many packets and bytes the filter has dropped so far.
func (f *Filter) Dropped() (Counter, error) {
	c, done, err := nftConn(f.nc.ns)
	if err != nil {
		return Counter{}, err
	}
	defer done()
	return readCounter(c, f.nc.table, f.counter)
}

// Remove deletes the filter's chain (its counter stays readable).
func (f *Filter) Remove() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed {
		return nil
	}
	c, done, err := nftConn(f.nc.ns)
	if err != nil {
		return err
	}
	defer done()
	c.DelChain(f.chain)
	if err := c.Flush(); err != nil {
		return fmt.Errorf("shapedlink: removing %s: %w", f.what, err)
	}
	f.removed = true
	return nil
}

func (n *nftCounters) addFilter(kind, what string, match []expr.Any) (*Filter, error) {
	n.mu.Lock()
	n.seq++
	name := fmt.Sprintf("%s%d", kind, n.seq)
	n.mu.Unlock()
	c, done, err := nftConn(n.ns)
	if err != nil {
		return nil, err
	}
	defer done()
	c.AddObj(&nftables.CounterObj{Table: n.table, Name: name})
	ch := c.AddChain(&nftables.Chain{
		Name: name, Table: n.table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookEgress, Priority: nftables.ChainPriorityRef(prioFilter), Device: n.dev,
	})
	exprs := append(append([]expr.Any(nil), match...),
		&expr.Objref{Type: nftObjectCounter, Name: name},
		&expr.Verdict{Kind: expr.VerdictDrop})
	c.AddRule(&nftables.Rule{Table: n.table, Chain: ch, Exprs: exprs})
	if err := c.Flush(); err != nil {
		return nil, fmt.Errorf("shapedlink: installing %s: %w", what, err)
	}
	return &Filter{what: what, nc: n, chain: ch, counter: name}, nil
}
