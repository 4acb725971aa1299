package report

import (
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// CPUSummary is what an arm's processes cost: CPU time (user plus system,
// over each process's whole life, handshake and closing included) per
// megabyte (10^6 bytes) the saturating channel delivered over the whole run,
// and peak resident memory, over the runs that recorded them.
type CPUSummary struct {
	Runs int `json:"runs"`
	// ServerMsPerMB and ClientMsPerMB are median and range over runs.
	ServerMsPerMB stats.Summary `json:"server_cpu_ms_per_mb"`
	ClientMsPerMB stats.Summary `json:"client_cpu_ms_per_mb"`
	// ServerMaxRSSMiB and ClientMaxRSSMiB are the largest peak RSS seen.
	ServerMaxRSSMiB float64 `json:"server_max_rss_mib"`
	ClientMaxRSSMiB float64 `json:"client_max_rss_mib"`
}

// cpuSummary summarises the runs that recorded both processes' usage and
// delivered bulk bytes; nil when none did.
func cpuSummary(rs []results.Run) *CPUSummary {
	var srv, cli []float64
	var c CPUSummary
	for _, r := range rs {
		if r.Failed != "" || r.ServerUsage == nil || r.ClientUsage == nil || r.BulkBytesTotal <= 0 {
			continue
		}
		mb := float64(r.BulkBytesTotal) / 1e6
		srv = append(srv, ms(r.ServerUsage.CPU())/mb)
		cli = append(cli, ms(r.ClientUsage.CPU())/mb)
		c.ServerMaxRSSMiB = max(c.ServerMaxRSSMiB, float64(r.ServerUsage.MaxRSSKiB)/1024)
		c.ClientMaxRSSMiB = max(c.ClientMaxRSSMiB, float64(r.ClientUsage.MaxRSSKiB)/1024)
	}
	if len(srv) == 0 {
		return nil
	}
	c.Runs = len(srv)
	c.ServerMsPerMB, _ = stats.Describe(srv)
	c.ClientMsPerMB, _ = stats.Describe(cli)
	return &c
}
