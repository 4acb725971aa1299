package shapedlink

import (
	"strings"
	"testing"
	"time"
)

func TestShaperReportDistorted(t *testing.T) {
	clean := ShaperStats{Direction: "server->client", ShaperCounters: ShaperCounters{Received: 100, Forwarded: 99, LossDrops: 1}, LateP50Ms: 0.004, LateP99Ms: 0.25, LateMaxMs: 3}
	for _, c := range []struct {
		name string
		mod  func(*ShaperStats)
		want string // substring of the reason; "" for clean
	}{
		{"clean", func(*ShaperStats) {}, ""},
		{"late p99 at the limit is clean", func(s *ShaperStats) { s.LateP99Ms = 1 }, ""},
		{"late p99 above the limit", func(s *ShaperStats) { s.LateP99Ms = 2 }, "lateness"},
		{"socket drops", func(s *ShaperStats) { s.SocketDrops = 1 }, "dropped frames"},
		{"send errors", func(s *ShaperStats) { s.SendErrors = 1 }, "writes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			back := clean
			back.Direction = "client->server"
			c.mod(&back)
			got := ShaperReport{Directions: []ShaperStats{clean, back}}.Distorted(time.Millisecond)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("Distorted = %q, want it to contain %q", got, c.want)
			}
			if c.want != "" && !strings.HasPrefix(got, "client->server") {
				t.Errorf("Distorted = %q does not name the direction", got)
			}
		})
	}
}
