package pathchange

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/analyse.golden.json from the code as it is")

// goldenRuns are what the roles and the link could have recorded for
// three runs that between them take every path through analyse: a QUIC
// run that migrated, with the server's peers, the old address removed
// late, timeouts, failed channels on both ends and errors reported only
// by the roles; a TCP run whose connections' TCP_INFO series tell what
// the kernel did, in which the change never happened; and a run whose
// client measured nothing.
func goldenRuns() []Record {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	up := start.Add(-80 * msec)
	change := start.Add(10 * time.Second)
	c := Change{At: 10*time.Second + 80*msec, Order: OrderMakeFirst, OldAddr: "198.18.0.2", NewAddr: "198.18.0.3"}
	samples := steady(0, 10*time.Second, 80*msec, 20*msec)
	samples = append(samples, spicelike.Sample{Offset: 10 * time.Second, RTT: 900 * msec})
	samples = append(samples, steady(10*time.Second+950*msec, 20*time.Second, 85*msec, 20*msec)...)
	quic := roleResult{SessionUp: up, Err: "client: the run ended with errors",
		Client: &spicelike.ClientResult{Start: start, End: start.Add(20 * time.Second), Samples: samples, Timeout: time.Second,
			Timeouts: 2, TimeoutOffsets: []time.Duration{10 * time.Second, 10*time.Second + 200*msec},
			Errors: []spicelike.ChannelError{{Channel: "display", Role: spicelike.Interactive, Phase: "end", Err: "no answer"}}},
		Migration: &transport.MigrationResult{Started: change, Elapsed: 40 * msec,
			Paths: []transport.PathMigration{{Channels: []int{0, 1}, From: "0.0.0.0:4000", To: "198.18.0.3:4000", Validated: 20 * msec, Switched: 40 * msec}}},
		Events: []Event{
			{At: change.Add(-time.Second), Side: "client", What: "session up"},
			{At: change, Side: "client", What: changeBegins + " (make-first): ..."},
			{At: change.Add(2 * time.Second), Side: "client", What: "connections ended: main"},
			{At: change.Add(3 * time.Second), Side: "client", What: "connections ended: "},
		}}
	quicServer := roleResult{Err: "server: channel display failed",
		Server: &spicelike.ServerResult{Errors: []spicelike.ChannelError{{Channel: "display", Phase: "end", Err: "reset"}}},
		Events: []Event{
			{At: start, Side: "server", What: "peer address 198.18.0.2:4000"},
			{At: change.Add(30 * msec), Side: "server", What: "peer address 198.18.0.2:4000 198.18.0.3:4000"},
			{At: change.Add(150 * msec), Side: "server", What: "peer address 198.18.0.3:4000"},
			{At: change.Add(2500 * msec), Side: "server", What: "channel error: display: reset"},
			{At: change.Add(2600 * msec), Side: "server", What: "connections ended: display"},
		}}
	link := []Event{
		{At: change.Add(10 * msec), Side: "link", What: "new client address added"},
		{At: change.Add(500 * msec), Side: "link", What: "old client address removed"},
	}

	tcpInfo := func(at time.Duration, acked uint64, retrans uint32, ca, state uint8) transport.TCPInfo {
		return transport.TCPInfo{At: at, BytesAcked: acked, Retransmits: retrans, CAState: ca, State: state, Unacked: 7}
	}
	tcpState := &transport.State{Started: start, TCP: []transport.TCPConnState{
		{Channel: 0, LocalAddr: "198.18.0.2:4000", RemoteAddr: "198.18.1.1:5900",
			Series: []transport.TCPInfo{tcpInfo(9*time.Second, 1000, 1, 0, 1), tcpInfo(10500*msec, 1500, 2, 0, 1), tcpInfo(11*time.Second, 1500, 5, tcpCALoss, 1)},
			Info:   tcpInfo(12*time.Second, 1500, 9, tcpCALoss, 7), InfoError: "socket closed"},
		{Channel: 1, LocalAddr: "198.18.0.2:4001", RemoteAddr: "198.18.1.1:5900", Info: tcpInfo(12*time.Second, 0, 0, 0, 0)},
	}}
	tcp := roleResult{SessionUp: up, State: tcpState, Err: "client: exit status 1",
		Client: &spicelike.ClientResult{Start: start, End: start.Add(20 * time.Second), Samples: steady(0, 20*time.Second, 80*msec, 20*msec)},
		Events: []Event{{At: change, Side: "client", What: "path change failed: no such address"}}}
	tcpServer := roleResult{Err: "server: exit status 1", State: &transport.State{Started: start, TCP: []transport.TCPConnState{{Channel: 0, Info: tcpInfo(time.Second, 0, 0, 0, 1)}}},
		Server: &spicelike.ServerResult{Cancelled: true},
		Events: []Event{{At: change.Add(time.Second), Side: "server", What: "channel error: main: cancelled"}}}

	return []Record{
		analyse(results.Cell{RTTms: 80, RateMbit: 10, LossPct: 1}, "quic", 1, c, quic, quicServer, link),
		analyse(results.Cell{RTTms: 80, RateMbit: 10}, "tcp", 2, c, tcp, tcpServer, nil),
		analyse(results.Cell{}, "quic", 3, c, roleResult{Err: "client: could not connect", Events: quic.Events[:1]}, roleResult{}, link),
	}
}

// TestAnalyseGolden: the records analyse makes of goldenRuns are byte for
// byte what they were. A change here is a change in what a record says;
// if it is meant, rerun with -update-golden and read the diff.
func TestAnalyseGolden(t *testing.T) {
	got, err := json.MarshalIndent(goldenRuns(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "analyse.golden.json")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestAnalyseGolden -update-golden to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
