package overlink

import (
	"fmt"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Summary is a few lines on how the run went: how long, the client's
// status, what the emulator did with the wire segments of each direction,
// and what each end wrote to its device.
func (r *Record) Summary() []string {
	s := fmt.Sprintf("%.1f s over %s", r.Finished.Sub(r.Started).Seconds(), r.Profile)
	if r.Backend != "" {
		s += " (" + r.Backend + ", offload " + r.Offload + ")"
	}
	if r.ExitCode >= 0 {
		s += fmt.Sprintf("; the client exited %d", r.ExitCode)
	} else {
		s += "; the client did not run to its end"
	}
	lines := []string{s}
	if r.Shaper != nil {
		lines = append(lines, r.Shaper.settings())
		for _, d := range r.Shaper.Directions {
			lines = append(lines, d.line())
		}
	}
	if srv, ok := r.Egress["server"]; ok {
		cli := r.Egress["client"]
		lines = append(lines, fmt.Sprintf("device writes (a super-packet is one): server %s, client %s", writesText(srv), writesText(cli)))
	}
	return lines
}

// settings is the emulator's keep-awake and departure window as run.
func (s *ShaperRecord) settings() string {
	awake := "CPUs left to idle"
	if len(s.KeepAwakeCPUs) > 0 {
		awake = fmt.Sprintf("CPUs %v kept awake", s.KeepAwakeCPUs)
	}
	window := "no departure window"
	if s.DepartureWindowMs > 0 {
		window = fmt.Sprintf("departure window %.3f ms", s.DepartureWindowMs)
	}
	return "emulator: " + awake + ", " + window
}

// line is the direction's account in wire segments.
func (d DirectionRecord) line() string {
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

// LateLimit is the emulator lateness (99th percentile, either direction)
// above which Warnings says that the host, not the profile, timed the
// link: the bench's own threshold (results.ShaperLateLimit).
const LateLimit = time.Millisecond

// Warnings say where the emulator's counters show that the link was not
// what the profile says: frames the host lost (the kernel before the
// emulator read them, failed writes, frames too large for it), super-packets
// judged whole, or a lateness tail above LateLimit, and with it limit
// drops that frames held late made more of. None without the emulator.
func (r *Record) Warnings() []string {
	if r.Shaper == nil {
		return nil
	}
	var out []string
	for _, d := range r.Shaper.Directions {
		host := d.SocketDrops + d.UnreadableDrops + d.SendErrors + d.OversizeDrops
		if host > 0 {
			out = append(out, fmt.Sprintf("%s: the host lost %d wire segments (socket %d, unreadable %d, send errors %d, oversize %d): the profile did not drop them",
				d.Direction, host, d.SocketDrops, d.UnreadableDrops, d.SendErrors, d.OversizeDrops))
		}
		if d.JudgedWhole > 0 {
			out = append(out, fmt.Sprintf("%s: %d super-packets could not be cut into wire segments and were judged whole (one loss draw, one limit slot each): -offload wire has every packet judged on its own",
				d.Direction, d.JudgedWhole))
		}
		if d.LateP99Ms > float64(LateLimit)/float64(time.Millisecond) {
			w := fmt.Sprintf("%s: the emulator wrote frames late (p99 %.2f ms, max %.2f ms, over %v): the host, not the profile, set this direction's timing and rate",
				d.Direction, d.LateP99Ms, d.LateMaxMs, LateLimit)
			if d.LimitDrops > 0 {
				w += fmt.Sprintf(", and frames held past their due time took places in the limit, so some of its %d limit drops are the host's", d.LimitDrops)
			}
			if strings.HasPrefix(r.Shaper.Priority, "SCHED_OTHER") {
				w += "; the emulator ran without real-time priority (" + r.Shaper.Priority + ")"
			}
			if r.Offload == shapedlink.OffloadWire.String() {
				w += "; -offload keep carries high rates with far fewer frames"
			} else {
				w += "; a lower rate, or a less busy machine, keeps the link the profile's"
			}
			out = append(out, w)
		}
	}
	if r.Shaper.Unsettled {
		out = append(out, "the link still carried traffic while its counters were read: a direction's counts may disagree by the frames that moved meanwhile")
	}
	return out
}
