package main

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// small is a probe configuration a test can afford.
var small = probeConfig{bulk: 3 * time.Second, bulkWarmup: time.Second, packetSize: 1280, echoes: 10,
	echoGap: 20 * time.Millisecond, datagrams: 300, spacing: 4 * time.Millisecond}

// TestProbesInVirtualTime: the probes over an in-process link in virtual
// time give the model's figures: an idle echo of 64 bytes (106 on the
// wire) over 80:10 takes exactly 80 ms and two serialisations, and a
// bulk transfer moves data at no more than the rate.
func TestProbesInVirtualTime(t *testing.T) {
	f := flags{seed: 1, probe: small}
	var r row
	synctest.Test(t, func(t *testing.T) { r = probeAll("80:10", onVirtual, shapedlink.BackendInProcess, f) })
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := 80*time.Millisecond + 2*106*8*time.Second/10e6
	if r.echo.p50 != want || r.echo.p99 != want || r.echo.lost != 0 {
		t.Errorf("echo p50 %v p99 %v, %d lost; want %v, %v, 0", r.echo.p50, r.echo.p99, r.echo.lost, want, want)
	}
	if r.goodput <= 0 || r.goodput > 10 || count(r.lost) != 0 {
		t.Errorf("goodput %.3f Mbit/s over 10 Mbit/s, %d datagrams lost on a lossless link", r.goodput, count(r.lost))
	}
}

// TestLossPatternRealAndVirtual: with the same seed the in-process link
// loses the same datagrams in real time as in virtual time, since its
// loss draws depend only on the datagrams' order.
func TestLossPatternRealAndVirtual(t *testing.T) {
	p, err := shapedlink.ParseProfile("80:10,loss=ge:1/20")
	if err != nil {
		t.Fatal(err)
	}
	run := func() []bool {
		link, err := shapedlink.New(context.Background(), p, shapedlink.Options{Backend: shapedlink.BackendInProcess, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		defer link.Close()
		lost, err := lossPattern(context.Background(), link, small)
		if err != nil {
			t.Fatal(err)
		}
		return lost
	}
	real := run()
	var virtual []bool
	synctest.Test(t, func(t *testing.T) { virtual = run() })
	if i := firstDifference(real, virtual); i >= 0 || count(real) == 0 {
		t.Errorf("real time lost %d, virtual time %d, first difference at #%d", count(real), count(virtual), i)
	}
}

// TestCompare: the table reads an in-process row against the emulator's
// by the targets.
func TestCompare(t *testing.T) {
	ms := time.Millisecond
	ref := row{carrier: onEmulator, goodput: 10, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true, false}}
	for _, c := range []struct {
		r    row
		want string
	}{
		{row{goodput: 9.8, echo: echoResult{p50: 80*ms + 150*time.Microsecond}, lost: []bool{false, true, false}}, "met"},
		{row{goodput: 9.6, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true, false}}, "missed: [goodput]"},
		{row{goodput: 10, echo: echoResult{p50: 80*ms - 250*time.Microsecond}, lost: []bool{false, true, false}}, "missed: [p50]"},
		{row{goodput: 10, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true, true}}, "missed: [pattern]"},
		{row{goodput: 10, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true}}, "missed: [pattern]"},
	} {
		if _, _, _, got := compare(c.r, &ref); got != c.want {
			t.Errorf("%+v against %+v: %q, want %q", c.r, ref, got, c.want)
		}
	}
	var b strings.Builder
	writeTable(&b, []row{{profile: "80:10", carrier: onEmulator, err: errNoEmulatorForTest}, {profile: "80:10", carrier: onVirtual, goodput: 9}})
	if !strings.Contains(b.String(), "did not run: no emulator here") || !strings.Contains(b.String(), "9.000") {
		t.Errorf("table:\n%s", b.String())
	}
}

var errNoEmulatorForTest = errString("no emulator here")

type errString string

func (e errString) Error() string { return string(e) }
