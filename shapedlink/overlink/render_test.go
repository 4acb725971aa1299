package overlink

import (
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// dirRecord is a direction's record for the tests below.
func dirRecord(name string, c shapedlink.ShaperCounters, held uint64, p99 float64) DirectionRecord {
	return DirectionRecord{ShaperStats: shapedlink.ShaperStats{Direction: name, ShaperCounters: c, LateP99Ms: p99, LateMaxMs: 2 * p99}, Held: held}
}

// TestSummaryLabelsCounts: the summary says what it counts: wire segments
// through the emulator, with drops by cause and what it held, and device
// writes at the ends, where a super-packet is one (it used to say
// "packets sent" of the device writes alone, 9,935 "packets" for 566 MB).
func TestSummaryLabelsCounts(t *testing.T) {
	rec := &Record{Profile: "5:1000", Backend: "emulator", Offload: "keep", ExitCode: 0,
		Shaper: &ShaperRecord{Priority: "SCHED_FIFO 1", Directions: []DirectionRecord{
			dirRecord("server->client", shapedlink.ShaperCounters{Received: 400000, Forwarded: 399000, ForwardedBytes: 566_000_000, LossDrops: 600, LimitDrops: 390, QueueDrops: 7}, 3, 0.1),
			dirRecord("client->server", shapedlink.ShaperCounters{Received: 9935, Forwarded: 9935, ForwardedBytes: 650_000, SocketDrops: 2}, 0, 0.05),
		}},
		Egress: map[string]shapedlink.EgressCounters{
			"server": {All: shapedlink.Counter{Packets: 26646, Bytes: 566_000_000}, Oversize: shapedlink.Counter{Packets: 20000}},
			"client": {All: shapedlink.Counter{Packets: 9935, Bytes: 650_000}},
		}}
	got := strings.Join(rec.Summary(), "\n")
	for _, want := range []string{
		"(emulator, offload keep); the client exited 0",
		"server->client: 400000 wire segments in, 399000 forwarded (566.0 MB), 997 dropped (loss 600, limit 390, queue discipline's limit 7), 3 held; late p99 0.10 ms",
		"client->server: 9935 wire segments in, 9935 forwarded (650.0 kB), 0 dropped, 0 held; before the emulator read them the kernel dropped 2",
		"device writes (a super-packet is one): server 26646 (20000 super-packets, 566.0 MB), client 9935 (0 super-packets, 650.0 kB)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary does not say %q:\n%s", want, got)
		}
	}
}

// TestWarnings: the emulator running late (p99 over the bench's 1 ms) and
// frames the host lost are warned of, with the limit drops lateness makes
// more of and what to try; a clean run has no warning.
func TestWarnings(t *testing.T) {
	late := &Record{Offload: "wire", Shaper: &ShaperRecord{Priority: "SCHED_OTHER (asked for SCHED_FIFO 1: operation not permitted)", Directions: []DirectionRecord{
		dirRecord("server->client", shapedlink.ShaperCounters{Received: 100, Forwarded: 90, LimitDrops: 10}, 0, 1.4),
		dirRecord("client->server", shapedlink.ShaperCounters{Received: 100, Forwarded: 99, SendErrors: 1, SocketDrops: 4}, 0, 0.2),
	}}}
	got := strings.Join(late.Warnings(), "\n")
	for _, want := range []string{
		"server->client: the emulator wrote frames late (p99 1.40 ms, max 2.80 ms, over 1ms): the host, not the profile, set this direction's timing and rate",
		"so some of its 10 limit drops are the host's",
		"without real-time priority (SCHED_OTHER",
		"-offload keep",
		"client->server: the host lost 5 wire segments (socket 4, unreadable 0, send errors 1, oversize 0)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the warnings do not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "client->server: the emulator wrote frames late") {
		t.Errorf("a direction 0.2 ms late is warned of:\n%s", got)
	}
	clean := &Record{Offload: "keep", Shaper: &ShaperRecord{Priority: "SCHED_FIFO 1", Directions: []DirectionRecord{
		dirRecord("server->client", shapedlink.ShaperCounters{Received: 100, Forwarded: 90, LimitDrops: 6, LossDrops: 4}, 0, 0.99),
	}}}
	if w := clean.Warnings(); len(w) != 0 {
		t.Errorf("a run within the profile is warned of: %q", w)
	}
	whole := &Record{Offload: "keep", Shaper: &ShaperRecord{Priority: "SCHED_FIFO 1", Directions: []DirectionRecord{
		dirRecord("server->client", shapedlink.ShaperCounters{Received: 100, Forwarded: 100, JudgedWhole: 3}, 0, 0.1),
	}}}
	want := "server->client: 3 super-packets could not be cut into wire segments and were judged whole"
	if got := strings.Join(whole.Warnings(), "\n"); !strings.Contains(got, want) {
		t.Errorf("the warnings do not say %q:\n%s", want, got)
	}
	if line := whole.Shaper.Directions[0].line(); !strings.Contains(line, "3 super-packets judged whole") {
		t.Errorf("the summary line does not count the super-packets judged whole: %s", line)
	}
}
