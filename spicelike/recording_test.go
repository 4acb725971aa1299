package spicelike_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// replayOverLink plays rp for 12 s (2 s warm-up) over an in-process
// 80:10 link in virtual time on the quic arm, and says what is wrong: no
// key-to-echo sample, a sample under the link's 80 ms round trip, or the
// server's messages moving at under 70% of the link's 10 Mbit/s.
func replayOverLink(t *testing.T, rp *spicelike.Replay) error {
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 12*time.Second, 2*time.Second
	w.Replay, w.Channels = rp, rp.ConfigChannels()
	var errs []error
	synctest.Test(t, func(t *testing.T) {
		link := shapedlinktest.Sim(t, "80:10", shapedlink.Options{Seed: 3})
		r, err := measure.Run(context.Background(), measure.OverLink(link), measure.QUIC, w, transport.Options{PacketSize: 1280})
		if err != nil {
			errs = append(errs, err)
			return
		}
		samples := r.Client.Measured()
		t.Logf("%d key-to-echo samples, %d timed out, %.2f Mbit/s to the client", len(samples), r.Repeat.Timeouts, r.Repeat.ThroughputMbit)
		if len(samples) == 0 {
			errs = append(errs, errors.New("no key-to-echo sample"))
		}
		for _, s := range samples {
			if s.RTT < 80*time.Millisecond {
				errs = append(errs, fmt.Errorf("a key-to-echo sample of %v, under the link's 80 ms round trip", s.RTT))
				break
			}
		}
		if r.Repeat.ThroughputMbit < 0.7*10 {
			errs = append(errs, fmt.Errorf("%.2f Mbit/s to the client, under 70%% of the link's 10 Mbit/s", r.Repeat.ThroughputMbit))
		}
	})
	return errors.Join(errs...)
}

// TestRecordingFillsLinkInVirtualTime: the shipped video recording,
// played over an 80:10 link in virtual time, gives key-to-echo samples no
// shorter than the round trip and fills the link; the same recording with
// its keys taken out, or with every other display message taken out (a
// display under the link's rate), is caught.
func TestRecordingFillsLinkInVirtualTime(t *testing.T) {
	rp, err := spicelike.Recording("video")
	if err != nil {
		t.Fatal(err)
	}
	if err := replayOverLink(t, rp); err != nil {
		t.Fatalf("the shipped video recording: %v", err)
	}
	noKeys, _ := spicelike.Recording("video")
	noKeys.Keys = 0
	for i, c := range noKeys.Channels {
		noKeys.Channels[i].Messages = slices.DeleteFunc(slices.Clone(c.Messages), func(m spicelike.ReplayMessage) bool { return m.Kind != spicelike.KindScheduled })
	}
	if err := replayOverLink(t, noKeys); err == nil || !strings.Contains(err.Error(), "no key-to-echo sample") {
		t.Errorf("the recording without keys: %v, want no sample", err)
	}
	thin, _ := spicelike.Recording("video")
	for i, c := range thin.Channels {
		if c.Name != "display" {
			continue
		}
		n := 0
		thin.Channels[i].Messages = slices.DeleteFunc(slices.Clone(c.Messages), func(m spicelike.ReplayMessage) bool {
			n++
			return m.Kind == spicelike.KindScheduled && m.ToClient && n%2 == 0
		})
	}
	if err := replayOverLink(t, thin); err == nil || !strings.Contains(err.Error(), "under 70%") {
		t.Errorf("the recording with half its display: %v, want it under the link's rate", err)
	}
}
