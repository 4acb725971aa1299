package pathchange

import (
	"strings"
	"testing"
	"time"
)

// TestWriteTable: a summary row per arm: survival and the stall's median and range over
// repeats. An open stall (nothing completed before the run ended) is a
// lower bound, marked ≥.
func TestWriteTable(t *testing.T) {
	ms := func(median, lo, hi int) Spread {
		d := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
		return Spread{N: 3, Median: d(median), Min: d(lo), Max: d(hi)}
	}
	rows := []Row{
		{Order: "make-first", Arm: "tcp", Repeats: 3, Stall: ms(10050, 10020, 10110), OpenStalls: 3,
			Baseline: ms(190, 180, 200), ClientNoticed: ms(4800, 4750, 4900), Failures: []string{"3× interactive timeout"}},
		{Order: "make-first", Arm: "quic", Repeats: 3, Survived: 3, Stall: ms(420, 380, 510),
			StallRTT: ms(400, 360, 490), Recovery: ms(160, 150, 170), Baseline: ms(200, 190, 230),
			Validated: ms(95, 90, 140), ServerMoved: ms(140, 130, 180)},
	}
	var b strings.Builder
	writeTable(&b, rows)
	want := `| order | loss | arm | survived | stall ms | open stalls | stall-ending RTT ms | recovery p50 ms | baseline gap ms | QUIC path validated ms | server moved ms |
|---|---|---|---|---|---|---|---|---|---|---|
| make-first | 0% | tcp | 0/3 | ≥ 10050 [10020–10110] | 3 | – | – | 190 [180–200] | – | – |
| make-first | 0% | quic | 3/3 | 420 [380–510] | 0 | 400 [360–490] | 160 [150–170] | 200 [190–230] | 95 [90–140] | 140 [130–180] |

When each application first saw a problem, ms after the change (n: repeats where it did; – never, within the run and the linger):

| order | loss | arm | client noticed ms (n) | server noticed ms (n) |
|---|---|---|---|---|
| make-first | 0% | tcp | 4800 [4750–4900] (3) | – (0) |
| make-first | 0% | quic | – (0) | – (0) |

First client error per run:

- make-first, 0% loss, tcp: 3× interactive timeout
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
