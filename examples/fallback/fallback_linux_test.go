package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// The runs re-execute the test binary as their server and client.
// Started by cmdtest.Run, the test binary is the command itself.
func TestMain(m *testing.M) {
	maybeRunRole()
	cmdtest.Main(m, main)
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
	cfg, err := buildConfig("100:10", "0", strings.Join(Arms(), " "), 2, 5, giveUp, 100*time.Millisecond, t.TempDir(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := runAll(context.Background(), cfg, log); err != nil {
		t.Fatal(err)
	}
	recs, err := loadRecords(cfg.workdir)
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
			if r.Arm == ArmTCP {
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
		wantArm := transport.ArmTCP
		if r.Arm == ArmFallbackOpen {
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
			case ArmTCP:
				if f != nil {
					t.Errorf("tcp connect %d has a fallback record", c.Index)
				}
			case ArmFallbackOpen:
				if f == nil || f.QUICOutcome != transport.QUICUsed || c.Elapsed >= giveUp {
					t.Errorf("fallback-open connect %d: %v, %+v: want QUIC used before the give-up", c.Index, c.Elapsed, f)
				}
			case ArmFallbackBlocked:
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
		if r.Arm == ArmFallbackBlocked {
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
		if !strings.Contains(out.String(), "| 100:10 | "+a+" | 2/2 |") {
			t.Errorf("summary has no complete row for %s:\n%s", a, out.String())
		}
	}

	// A rerun finds everything recorded and measures nothing.
	start := time.Now()
	if err := runAll(context.Background(), cfg, log); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("rerun took %v: it should skip every arm", d)
	}
	// Other settings in the same directory are refused.
	other := cfg
	other.connects = 3
	if err := runAll(context.Background(), other, log); err == nil || !strings.Contains(err.Error(), "another -workdir") {
		t.Errorf("a run with other settings was mixed into the records: %v", err)
	}
}

func TestBuildConfigRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		profiles, losses, arms string
		connects               int
		giveUp                 time.Duration
		want                   string
	}{
		{"80:10", "0", "tcp udp", 10, time.Second, "unknown arm"},
		{"80:10:1", "0", "tcp", 10, time.Second, "carries its own loss"},
		{"80:10", "x", "tcp", 10, time.Second, "loss"},
		{"80:10", "0", "tcp", 0, time.Second, "-connects"},
		{"80:10", "0", "tcp", 10, 0, "-give-up"},
		{"", "0", "tcp", 10, time.Second, "no profiles"},
	} {
		_, err := buildConfig(tc.profiles, tc.losses, tc.arms, tc.connects, 5, tc.giveUp, 0, "w", "", 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to mention %q", tc, err, tc.want)
		}
	}
	c, err := buildConfig("80:10 150:2", "0 1", "tcp fallback-blocked", 10, 5, time.Second, 0, "w", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.plan()) != 8 {
		t.Errorf("2 profiles x 2 losses x 2 arms planned as %d jobs", len(c.plan()))
	}
}
