package main

import (
	"errors"
	"fmt"
	"github.com/shakenfist/quicbench/internal/buildinfo"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Record is what overlink writes on exit, with -record.
type Record struct {
	Profile string `json:"profile"`
	Backend string `json:"backend"`
	Mode    string `json:"mode"`
	// Offload is how the ends handled segmentation offload: "keep" or
	// "wire" (-offload).
	Offload       string    `json:"offload"`
	Applied       []string  `json:"applied"`
	ServerCommand []string  `json:"server_command,omitempty"`
	ClientCommand []string  `json:"client_command"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	// Build is which code ran overlink (its commit, and where that came
	// from), so a record can be reproduced.
	Build buildinfo.Info `json:"build"`
	// ExitCode is the client command's: its exit status, or 128 plus the
	// signal that ended it; -1 when it did not run to its end (Error says
	// why).
	ExitCode int `json:"exit_code"`
	// Shaper is the emulator's own account (nil with netem), in wire
	// segments: a super-packet counts as each of its segments.
	Shaper *ShaperRecord `json:"shaper,omitempty"`
	// Egress is each end's egress-hook counters, in device writes: every
	// packet that left it (a super-packet counts once), and those longer
	// than one wire packet.
	Egress map[string]shapedlink.EgressCounters `json:"egress,omitempty"`
	// Queue is the server end's egress queue, sampled every millisecond
	// (with -queue).
	Queue []shapedlink.QueueSample `json:"queue,omitempty"`
	// LinkError says the link broke while the command ran (the emulator's
	// shaper exited): what the command measured is then not the link's.
	LinkError string `json:"link_error,omitempty"`
	Error     string `json:"error,omitempty"`
}

// ShaperRecord is the emulator's scheduling priority and both directions'
// counters, server->client first, as read once the client command ended.
type ShaperRecord struct {
	Priority   string            `json:"priority"`
	Directions []DirectionRecord `json:"directions"`
	// Unsettled says the counters still moved while they were read (the
	// link carried traffic for all of the reading's 200 ms): the shaper
	// publishes them one at a time, so a direction's balance may then be
	// off by the frames that moved between two counters.
	Unsettled bool `json:"unsettled,omitempty"`
}

// DirectionRecord is one direction's counters (shapedlink.ShaperStats)
// and what the shaper held when they were read, so that they balance:
//
//	received + duplicates = forwarded + loss + limit + queue + codel +
//	                        blackout + send errors + oversize + held
//
// (socket and unreadable drops are frames the shaper never received).
type DirectionRecord struct {
	shapedlink.ShaperStats
	// Held is the wire segments in the shaper's queue and delay line
	// when the counters were read, HeldBytes their bytes.
	Held      uint64 `json:"held"`
	HeldBytes uint64 `json:"held_bytes"`
}

// newShaperRecord is r as the record keeps it.
func newShaperRecord(r shapedlink.ShaperReport) *ShaperRecord {
	out := &ShaperRecord{Priority: r.Priority}
	for _, d := range r.Directions {
		out.Directions = append(out.Directions, DirectionRecord{ShaperStats: d, Held: d.Packets, HeldBytes: d.Bytes})
	}
	return out
}

// Dropped is every wire segment the shaper received and did not forward
// or hold.
func (d DirectionRecord) Dropped() uint64 {
	return d.LossDrops + d.LimitDrops + d.QueueDrops + d.CoDelDrops + d.BlackoutDrops + d.SendErrors + d.OversizeDrops
}

// Imbalance is received + duplicates less forwarded, dropped and held:
// zero when the counters account for every wire segment.
func (d DirectionRecord) Imbalance() int64 {
	return int64(d.Received+d.Duplicates) - int64(d.Forwarded+d.Dropped()+d.Held)
}

// checkRecordPath says why a record could not be written to path ("" for
// no record): not a regular file, or in no directory this process can
// create a file in. It tries what writing the record will do: make the
// missing directories (it only looks for the nearest existing one) and
// create a file beside the record.
func checkRecordPath(path string) error {
	if path == "" {
		return nil
	}
	fail := func(why string, err error) error {
		return fmt.Errorf("-record %s: %s: %w; give a path in a directory you can write, or leave -record out", path, why, err)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fail("exists and is not a regular file", fs.ErrExist)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("cannot look at it", err)
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fail(dir+" is not a directory", fs.ErrInvalid)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return fail("cannot look at "+dir, err)
		}
		dir = filepath.Dir(dir)
	}
	f, err := os.CreateTemp(dir, ".overlink-record-check-*")
	if err != nil {
		return fail("cannot create a file in "+dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// finish writes the record where -record asks, or a short summary on
// stderr without it; warnings about the link go to stderr either way. A
// record that cannot be written is reported on stderr; it does not change
// the exit status, which is the client's.
func finish(c config, rec *Record, stderr io.Writer) {
	if c.record == "" {
		for _, line := range summary(rec) {
			fmt.Fprintln(stderr, "overlink:", line)
		}
	}
	for _, w := range warnings(rec) {
		fmt.Fprintln(stderr, "overlink: warning:", w)
	}
	if c.record == "" {
		fmt.Fprintln(stderr, "overlink: -record FILE keeps the link as applied and its counters as JSON")
		return
	}
	if err := results.WriteJSON(c.record, rec); err != nil {
		fmt.Fprintf(stderr, "overlink: the record was not written: %v (the exit status is still the client command's)\n", err)
	}
}

// summary is a few lines on how the run went: how long, the client's
// status, what the emulator did with the wire segments of each direction,
// and what each end wrote to its device.
func summary(rec *Record) []string {
	s := fmt.Sprintf("%.1f s over %s", rec.Finished.Sub(rec.Started).Seconds(), rec.Profile)
	if rec.Backend != "" {
		s += " (" + rec.Backend + ", offload " + rec.Offload + ")"
	}
	if rec.ExitCode >= 0 {
		s += fmt.Sprintf("; the client exited %d", rec.ExitCode)
	} else {
		s += "; the client did not run to its end"
	}
	lines := []string{s}
	if rec.Shaper != nil {
		for _, d := range rec.Shaper.Directions {
			lines = append(lines, directionLine(d))
		}
	}
	if srv, ok := rec.Egress["server"]; ok {
		cli := rec.Egress["client"]
		lines = append(lines, fmt.Sprintf("device writes (a super-packet is one): server %s, client %s", writesText(srv), writesText(cli)))
	}
	return lines
}

// directionLine is one direction's account in wire segments.
func directionLine(d DirectionRecord) string {
	s := fmt.Sprintf("%s: %d wire segments in, %d forwarded (%s), %d dropped", d.Direction, d.Received, d.Forwarded, bytesText(d.ForwardedBytes), d.Dropped())
	var causes []string
	for _, c := range []struct {
		name string
		n    uint64
	}{
		{"loss", d.LossDrops}, {"limit", d.LimitDrops}, {"queue discipline's limit", d.QueueDrops}, {"codel", d.CoDelDrops},
		{"blackout", d.BlackoutDrops}, {"send errors", d.SendErrors}, {"oversize", d.OversizeDrops},
	} {
		if c.n > 0 {
			causes = append(causes, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	if len(causes) > 0 {
		s += " (" + strings.Join(causes, ", ") + ")"
	}
	if d.Duplicates > 0 {
		s += fmt.Sprintf(", %d duplicated", d.Duplicates)
	}
	s += fmt.Sprintf(", %d held", d.Held)
	if d.JudgedWhole > 0 {
		s += fmt.Sprintf(", %d super-packets judged whole", d.JudgedWhole)
	}
	if d.SocketDrops+d.UnreadableDrops > 0 {
		s += fmt.Sprintf("; before the emulator read them the kernel dropped %d", d.SocketDrops+d.UnreadableDrops)
	}
	return s + fmt.Sprintf("; late p99 %.2f ms", d.LateP99Ms)
}

// writesText is an end's device writes: how many, how many of them
// super-packets, and their bytes.
func writesText(e shapedlink.EgressCounters) string {
	return fmt.Sprintf("%d (%d super-packets, %s)", e.All.Packets, e.Oversize.Packets, bytesText(e.All.Bytes))
}

// bytesText is n bytes in a unit that suits it.
func bytesText(n uint64) string {
	switch f := float64(n); {
	case n < 10_000:
		return fmt.Sprintf("%d bytes", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f kB", f/1e3)
	case n < 10_000_000_000:
		return fmt.Sprintf("%.1f MB", f/1e6)
	default:
		return fmt.Sprintf("%.2f GB", f/1e9)
	}
}

// lateLimit is the emulator lateness (99th percentile, either direction)
// above which overlink warns that the host, not the profile, timed the
// link: the bench's own threshold (report.ShaperLateLimit).
const lateLimit = time.Millisecond

// warnings say where the emulator's counters show that the link was not
// what the profile says: frames the host lost (the kernel before the
// emulator read them, failed writes, frames too large for it) or a
// lateness tail above lateLimit, and with it limit drops that frames held
// late made more of.
func warnings(rec *Record) []string {
	if rec.Shaper == nil {
		return nil
	}
	var out []string
	for _, d := range rec.Shaper.Directions {
		host := d.SocketDrops + d.UnreadableDrops + d.SendErrors + d.OversizeDrops
		if host > 0 {
			out = append(out, fmt.Sprintf("%s: the host lost %d wire segments (socket %d, unreadable %d, send errors %d, oversize %d): the profile did not drop them",
				d.Direction, host, d.SocketDrops, d.UnreadableDrops, d.SendErrors, d.OversizeDrops))
		}
		if d.JudgedWhole > 0 {
			out = append(out, fmt.Sprintf("%s: %d super-packets could not be cut into wire segments and were judged whole (one loss draw, one limit slot each): -offload wire has every packet judged on its own",
				d.Direction, d.JudgedWhole))
		}
		if d.LateP99Ms > float64(lateLimit)/float64(time.Millisecond) {
			w := fmt.Sprintf("%s: the emulator wrote frames late (p99 %.2f ms, max %.2f ms, over %v): the host, not the profile, set this direction's timing and rate",
				d.Direction, d.LateP99Ms, d.LateMaxMs, lateLimit)
			if d.LimitDrops > 0 {
				w += fmt.Sprintf(", and frames held past their due time took places in the limit, so some of its %d limit drops are the host's", d.LimitDrops)
			}
			if strings.HasPrefix(rec.Shaper.Priority, "SCHED_OTHER") {
				w += "; the emulator ran without real-time priority (" + rec.Shaper.Priority + ")"
			}
			if rec.Offload == shapedlink.OffloadWire.String() {
				w += "; -offload keep carries high rates with far fewer frames"
			} else {
				w += "; a lower rate, or a less busy machine, keeps the link the profile's"
			}
			out = append(out, w)
		}
	}
	if rec.Shaper.Unsettled {
		out = append(out, "the link still carried traffic while its counters were read: a direction's counts may disagree by the frames that moved meanwhile")
	}
	return out
}
