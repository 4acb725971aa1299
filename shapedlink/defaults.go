package shapedlink

import "time"

// DefaultSampleInterval is the queue sampler's default polling interval.
const DefaultSampleInterval = time.Millisecond
