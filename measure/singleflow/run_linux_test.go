package singleflow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport/quicreno"
	"golang.org/x/sys/unix"
)

// runControllers runs one short lossy flow of each of flows and returns
// their results, skipping where links or the controller cannot be had.
func runControllers(t *testing.T, p quicreno.Params, flows ...string) []Result {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the controller loads only in the initial user namespace")
	}
	if err := quicreno.CheckLoad(); err != nil {
		t.Skipf("cannot load a BPF congestion control here: %v", err)
	}
	// Only one test process can hold the controller: the same lock as
	// transport/quicreno's tests.
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "quicbench-quicreno-test.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	prof, err := shapedlink.ParseProfile("40:20")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ParseFlows(flows)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Profiles: []shapedlink.Profile{prof}, Losses: []float64{2}, Flows: fs, Repeats: 1,
		Duration: 5 * time.Second, Warmup: time.Second, Controller: p, Link: shapedlink.Options{Backend: shapedlink.BackendEmulator}}
	var rs []Result
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rs, err = Run(context.Background(), c, nil)
		// Another package's tests may hold the controller for a while.
		if err == nil || !strings.Contains(err.Error(), "already registered") || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		if strings.Contains(err.Error(), "namespace") {
			t.Skipf("cannot build links here: %v", err)
		}
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.Flow, r.Error)
		}
	}
	return rs
}

// TestControllerTakesEffect checks, from the sender's TCP_INFO, that
// quicreno's settings are what the socket ran: its initial window and its
// back-off after a loss, beside kernel reno's in the same test, and that
// changing the settings changes both.
func TestControllerTakesEffect(t *testing.T) {
	check := func(r Result, iw float64, lo, hi float64) {
		t.Helper()
		med, err := stats.Median(r.Backoffs)
		if err != nil {
			t.Fatalf("%s: no loss episode in %d s at 2%% loss", r.Flow, 5)
		}
		if r.InitialWindow != iw || med < lo || med > hi {
			t.Errorf("%s (%s): initial window %v, median back-off %.2f over %d episodes; want %v and %.2f..%.2f",
				r.Flow, r.Controller, r.InitialWindow, med, len(r.Backoffs), iw, lo, hi)
		}
	}
	rs := runControllers(t, quicreno.Defaults(), "tcp-quicreno", "tcp-reno")
	check(rs[0], 32, 0.62, 0.78)
	check(rs[1], 10, 0.40, 0.58)
	// The same controller set as reno: its figures must follow.
	p := quicreno.Defaults()
	p.BetaPercent, p.InitialWindow = 50, 10
	rs = runControllers(t, p, "tcp-quicreno")
	check(rs[0], 10, 0.40, 0.58)
}
