package render

// The prose of the markdown summary and the plot captions. Each is a
// format for fmt where its comment names arguments, else plain text
// written as a format with no verbs.

const (
	// proseWarmupOverridden is the warm-up line when report.Options overrode it (%s: the warm-up).
	proseWarmupOverridden = "The first %s of every run is discarded as warm-up (overridden when summarising, not what " +
		"the runs recorded)."

	// proseWarmupVaries is the warm-up line when arms recorded different warm-ups.
	proseWarmupVaries = "Runs recorded different warm-ups; each arm's is in the JSON output (-json)."

	// proseWarmupRecorded is the warm-up line when every arm recorded the same one (%s: the warm-up).
	proseWarmupRecorded = "The first %s of every run is discarded as warm-up, as the runs recorded."

	// proseMethod says how every figure in the tables is made.
	proseMethod = "All times are milliseconds. A cell's p50, p95 and p99 are the medians over repeats of each " +
		"repeat's own nearest-rank percentile, never a percentile of pooled samples. The p95 spread " +
		"is the highest minus the lowest repeat p95 in that cell and arm; the threshold for a " +
		"reading is the wider of the two arms' spreads, and a delta that does not exceed it is " +
		"unresolved."

	// proseSensitivity introduces a sensitivity group (%s: its congestion control).
	proseSensitivity = "These cells pin kernel TCP to %s against quic-go's own controller: a sensitivity arm, to be " +
		"read beside the headline and never instead of it."

	// proseHeadline introduces the headline group (%s: its congestion control).
	proseHeadline = "Matched congestion control: kernel TCP pinned to %s."

	// proseControllerSettings gives quicreno's recorded settings (%s: them).
	proseControllerSettings = "Settings of the BPF controller, as the runs recorded them: %s (docs/controllers.md)."

	// proseInForce lists the controllers the runs recorded (%s: the list).
	proseInForce = "Congestion control in force, as the runs recorded it: %s."

	// proseSessionZero heads a profile table of a multi-session cell (%d: sessions).
	proseSessionZero = "These rows are session 0's alone, one of %d sharing the link; every session is in the " +
		"sessions section below."

	// proseReading introduces a reading table (%s: arm B, arm A, then arm B again).
	proseReading = "Delta is %s's median p95 minus %s's (positive: %s slower). Beside the spread rule, and " +
		"never instead of it: an order-statistic confidence interval for each arm's median p95, and " +
		"a two-sided Mann-Whitney U test between the arms' repeat p95s."

	// titleSensitivity is a sensitivity group's heading (%s: its congestion control).
	titleSensitivity = "Sensitivity cells: kernel TCP %s (not the headline)"

	// titleHeadline is the headline group's heading (%s: its congestion control).
	titleHeadline = "Interactive round trip, headline: kernel TCP %s"

	// proseThroughput introduces the throughput table.
	proseThroughput = "Median over measured repeats, Mbit/s, with the range across repeats in brackets."

	// proseRecovery introduces the recovery table.
	proseRecovery = "For each blackout and each step down of the rate that starts after the warm-up (the two directions' simultaneous changes counted once), the time from its end (the link back up, the rate restored) until the interactive echo is back: the arrival of the first of three echoes in a row, sent after the end, within 10% of the median round trip of the 2 s before the event. \"not recovered\" events had not come back by the next event or the run's end and are left out of the medians."

	// proseNoConnect stands in for the connect-time table when no run recorded one.
	proseNoConnect = "No run recorded a connect time."

	// proseConnect introduces the connect-time table.
	proseConnect = "Time to open every channel, per profile and arm, pooled over loss levels and " +
		"congestion-control settings: median, range in brackets, and the number of connects."

	// proseGSO introduces the offload table and states the rule (a format: %% is a percent sign).
	proseGSO = "Per QUIC cell, from the server's egress queue (bytes per queue slot over samples with at " +
		"least two packets queued) and/or the egress-hook counters. The verdict is off only if every " +
		"run said off; pooled mean is the range of the runs' pooled means; max is the largest bytes " +
		"per slot any sample held. Off means no sample held more bytes than (packets + 1) x the " +
		"expected size (a torn read of the packet and byte gauges cannot reach that) and no more " +
		"than 2%% of samples held more than packets x the expected size, so with offload off the max " +
		"can sit a little above the expected size."

	// proseNoQUIC stands in for the offload table when no arm was QUIC.
	proseNoQUIC = "No QUIC arm in these runs."

	// proseWarnings introduces the warnings list.
	proseWarnings = "Every cell and arm with a timed-out exchange, a repeat that could not be measured, offload " +
		"not verified off on a QUIC arm, or anything else that stops a reading being taken at face " +
		"value."

	// proseNoWarnings stands in for the warnings list when there is nothing to warn about.
	proseNoWarnings = "None: no timeouts, no unmeasured repeats, offload verified off on every QUIC arm."

	// proseCapped introduces the capped-display table.
	proseCapped = "The saturating channel paced to a fraction of the link rate, in bits per second of payload " +
		"(the link's rate counts wire bytes). Each row is one cell's QUIC-against-TCP reading " +
		"(stats.Compare: delta of median p95s against the wider of the two arms' p95 spreads); " +
		"\"uncapped\" rows are cells of the same runs without a cap. Throughput is the display " +
		"channel's Mbit/s, median over repeats."

	// proseCPU introduces the CPU and memory table.
	proseCPU = "CPU time (user + system) of each process over its whole life, per MB (10^6 bytes) the " +
		"saturating channel delivered in the run; median and range over repeats; and the largest " +
		"peak RSS. Server and client are separate processes; the link's shaper is not counted."

	// proseSessions introduces the sessions table and defines its columns.
	proseSessions = "Each cell runs N sessions of the five channels at once over one link. *All-session p95*: " +
		"per repeat, the p95 of every session's round trips taken together; median over repeats, " +
		"with the spread and range over repeats. *Session p95s*: each session's own cell figure " +
		"(median over repeats of that session's p95), as the median and the lowest-highest across " +
		"sessions. *Jain*: Jain's fairness index (sum x)^2 / (n sum x^2) over the sessions' " +
		"saturating-channel throughputs, per repeat; median and range over repeats (1 is an even " +
		"share, 1/N one session taking everything). *Total*: the saturating channels' Mbit/s summed " +
		"per repeat, median and range."

	// proseSessionsReading introduces the sessions reading table.
	proseSessionsReading = "Delta is B's all-session p95 minus A's (positive: B slower); the threshold is the wider of " +
		"the two arms' spreads over repeats (stats.Compare)."

	// proseEverySession introduces the per-session table.
	proseEverySession = "Sessions are numbered in the client's dial order; all run the same workload, so the " +
		"numbering carries no meaning beyond telling them apart. p50, p95 and p99 are medians over " +
		"repeats of that session's own percentiles; Mbit/s is its saturating channel, median and " +
		"range over repeats."

	// proseNoHost stands in for the host table when the runs recorded none.
	proseNoHost = "The runs recorded no host state."

	// proseBadHost says the host state could not be read (%v: why).
	proseBadHost = "The first run's host state could not be read: %v."

	// captionCDF is the CDF plot's caption (%s: the cell's label, then the sample counts).
	captionCDF = "%s: empirical CDF of the interactive round trip, each arm's post-warm-up samples pooled " +
		"over its measured repeats (%s). Pooling is fine for the shape of the distribution; the " +
		"table's p95 and its spread are per repeat."

	// captionTimeline is a timeline plot's caption (the cell's label, the arm, the repeat, its samples and changes).
	captionTimeline = "%s, %s, repeat %d: each of its %d interactive round trips at the time it was sent; the grey lines are the link's %d scheduled changes (dashed: the link back up)."

	// captionP95 is the p95-by-repeat plot's caption (%s: the cell's label, then the spreads).
	captionP95 = "%s: each dot is one repeat's own p95, the bar the median over repeats (the table's p95). " +
		"The vertical extent of an arm's dots is its p95 spread (%s); the wider of the two is the " +
		"threshold a delta must exceed."

	// captionThroughput is the throughput plot's caption (%s: the cell's label, then the link rate).
	captionThroughput = "%s: goodput of the saturating channel after warm-up, one dot per repeat, the bar at the " +
		"median; the axis runs to the link rate (%s Mbit/s)."
)
