package shapedlink

import "time"

// TablePrefix starts the name of every nftables table this package
// creates: TablePrefix, the creating process's id, "_", a counter.
const TablePrefix = "quicbench_"

// DefaultSampleInterval is the queue sampler's default polling interval.
const DefaultSampleInterval = time.Millisecond
