package fallback

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// The runs re-execute the test binary as their server and client.
func TestMain(m *testing.M) {
	MaybeRunRole()
	os.Exit(m.Run())
}

// TestEndToEnd runs every arm across an emulated 100 ms link with two
// connects each, in separate server and client processes, and checks the
// records: loose bounds, and the blocked arm's against the tcp arm's
// connects in the same run, because the machine is shared.
func TestEndToEnd(t *testing.T) {
	shapedlinktest.Need(t)
	const rtt = 100 * time.Millisecond
	// Ten round trips: QUIC's handshake takes one or two, and a loaded
	// host's wake-ups must not turn the open arm into a fallback.
	giveUp := time.Second
	p, err := shapedlink.ParseProfile("100:10")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Profiles: []shapedlink.Profile{p}, Arms: Arms(), Connects: 2, Channels: 5, GiveUp: giveUp, Gap: 100 * time.Millisecond,
		Workdir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Measured) != 3 || res.Skipped != 0 {
		t.Errorf("Run measured %d arms and skipped %d, want 3 and 0", len(res.Measured), res.Skipped)
	}
	recs, err := Load(cfg.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	// The control: the tcp arm's slowest connect in the same run, what
	// the blocked arm's fallback to TCP costs after the give-up.
	var tcpSlowest time.Duration
	for _, r := range recs {
		for _, c := range r.Results {
			if r.Arm == armTCP {
				tcpSlowest = max(tcpSlowest, c.Elapsed)
			}
		}
	}
	for _, r := range recs {
		if r.Failed != "" {
			t.Errorf("%s failed: %s", r.Arm, r.Failed)
			continue
		}
		if len(r.Results) != 2 {
			t.Errorf("%s: %d connects recorded, want 2", r.Arm, len(r.Results))
		}
		// The record keeps the link as built; the loop's run.json, in the
		// arm's directory, has what the link said at its end.
		if r.Link.Backend == "" || r.Link.Shaper != nil || len(r.Link.Applied) == 0 {
			t.Errorf("%s: record's link %+v, want the link as built", r.Arm, r.Link)
		}
		var run results.Run
		if err := results.ReadJSON(filepath.Join(cfg.dir(p), string(r.Arm), results.RunFile), &run); err != nil || run.Failed != "" || run.Arm != string(r.Arm) {
			t.Errorf("%s: the loop's run.json: %v, failed %q, arm %q", r.Arm, err, run.Failed, run.Arm)
		}
		wantArm := transport.ArmTCP
		if r.Arm == armFallbackOpen {
			wantArm = transport.ArmQUIC
		}
		if n := r.ServerSessions[wantArm]; n != 2 {
			t.Errorf("%s: server accepted %v, want 2 %s sessions", r.Arm, r.ServerSessions, wantArm)
		}
		for _, c := range r.Results {
			if c.Err != "" {
				t.Errorf("%s connect %d: %s", r.Arm, c.Index, c.Err)
				continue
			}
			if c.Arm != wantArm || c.Probe < rtt {
				t.Errorf("%s connect %d: session over %s, probe %v; want %s and a probe of at least one round trip", r.Arm, c.Index, c.Arm, c.Probe, wantArm)
			}
			if c.Elapsed < rtt {
				t.Errorf("%s connect %d: %v, less than one %v round trip", r.Arm, c.Index, c.Elapsed, rtt)
			}
			f := c.Fallback
			switch r.Arm {
			case armTCP:
				if f != nil {
					t.Errorf("tcp connect %d has a fallback record", c.Index)
				}
			case armFallbackOpen:
				if f == nil || f.QUICOutcome != transport.QUICUsed || c.Elapsed >= giveUp {
					t.Errorf("fallback-open connect %d: %v, %+v: want QUIC used before the give-up", c.Index, c.Elapsed, f)
				}
			case armFallbackBlocked:
				if f == nil || f.QUICOutcome != transport.QUICGaveUp {
					t.Errorf("fallback-blocked connect %d: %+v: want QUIC given up", c.Index, f)
					continue
				}
				// At least the give-up plus TCP's round trip; at most
				// a few round trips more, or what the tcp arm's connect
				// took in the same run and two round trips.
				if most := giveUp + max(4*rtt, tcpSlowest+2*rtt); c.Elapsed < giveUp+rtt || c.Elapsed > most {
					t.Errorf("fallback-blocked connect %d took %v: want %v + one round trip of %v, at most %v (the tcp arm's slowest connect took %v)", c.Index, c.Elapsed, giveUp, rtt, most, tcpSlowest)
				}
				if f.TCPStarted < giveUp || f.Ready < f.TCPStarted+rtt {
					t.Errorf("fallback-blocked connect %d timestamps out of order: %+v", c.Index, f)
				}
			}
		}
		if r.Arm == armFallbackBlocked {
			if r.UDPBlocked == nil || r.UDPBlocked.Packets == 0 {
				t.Errorf("the UDP block dropped nothing: %+v", r.UDPBlocked)
			}
		} else if r.UDPBlocked != nil {
			t.Errorf("%s has a UDP block", r.Arm)
		}
	}
	var out bytes.Buffer
	if err := Summarise(&out, recs); err != nil {
		t.Fatal(err)
	}
	for _, a := range Arms() {
		if !strings.Contains(out.String(), "| 100:10 | "+string(a)+" | 2/2 |") {
			t.Errorf("summary has no complete row for %s:\n%s", a, out.String())
		}
	}

	// A rerun finds everything recorded and measures nothing.
	start := time.Now()
	res, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second || len(res.Measured) != 0 || res.Skipped != 3 {
		t.Errorf("rerun took %v, measured %d and skipped %d arms: it should skip every arm", d, len(res.Measured), res.Skipped)
	}
	// Other settings in the same directory are refused.
	other := cfg
	other.Connects = 3
	if _, err := Run(context.Background(), other); err == nil || !strings.Contains(err.Error(), "another -workdir") {
		t.Errorf("a run with other settings was mixed into the records: %v", err)
	}
}
