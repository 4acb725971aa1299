// Package results is the on-disk record of a quicbench matrix: one directory
// per cell, arm and repeat, each holding a run.json written atomically, so an
// interrupted matrix can resume and a later reader (summarise, or another
// tool) can re-read everything that was measured.
//
// Layout under a work directory:
//
//	<workdir>/matrix.json                      the matrix as asked for
//	<workdir>/<cell>/<arm>/r<N>/run.json       one run (Run, below)
//	<workdir>/<cell>/<arm>/r<N>/server.log     the server process's log
//	<workdir>/<cell>/<arm>/r<N>/client.log     the client process's log
//	<workdir>/<cell>/<arm>/r<N>/queue.csv      queue samples (server egress)
//	<workdir>/<cell>/<arm>/r<N>/queue_flows.csv  its fullest FQ-CoDel flow queues
//	                                           per sample (only behind FQ-CoDel)
//
// where <cell> is Cell.Dir(), for example "80ms-10mbit_loss1_reno", or
// "80ms-10mbit_loss1_reno_s4" for four sessions sharing the link and
// "80ms-10mbit_loss1_reno_cap0.5" for a display capped at half the link.
// A run.json exists only for a finished run, measured or failed; its absence
// means the run is still to do. Scan (and Load) count a run.json only at
// that place and only when its record names that cell, arm and repeat,
// listing any other as ignored; every record is read through ReadFile,
// which takes a regular file of at most 1 GiB and nothing else.
package results
