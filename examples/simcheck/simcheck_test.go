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
		{row{carrier: onRealTime, goodput: 10, echo: echoResult{p50: 80*ms + 900*time.Microsecond}, lost: []bool{false, true, false}}, "missed: [p50]"},
		{row{carrier: onVirtual, goodput: 10, echo: echoResult{p50: 80*ms - 400*time.Microsecond}, lost: []bool{false, true, false}}, "met (p50 not judged: no host)"},
		{row{carrier: onVirtual, goodput: 9.6, echo: echoResult{p50: 80*ms - 400*time.Microsecond}, lost: []bool{false, true, false}}, "missed: [goodput]"},
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

// Every flag is checked whatever the mode, numbers within bounds, and a
// flag the mode does not use is refused by name.
func TestFlagsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-headline", "-duration", "100000h"}, "-duration 100000h0m0s: give at most 10m0s"},
		{[]string{"-headline", "-duration", "10s", "-warmup", "10s"}, "-duration 10s, -warmup 10s"},
		{[]string{"-headline", "-repeats", "1000000"}, "-repeats 1000000: give 2 to 100"},
		{[]string{"-headline", "-headline-profile", "fast"}, "-headline-profile"},
		{[]string{"-bulk", "100000h"}, "-bulk 100000h0m0s"},
		{[]string{"-bulk", "1ns", "-bulk-warmup", "0"}, "-bulk 1ns"},
		{[]string{"-echoes", "1000000000"}, "-echoes 1000000000"},
		{[]string{"-echoes", "100000", "-echo-gap", "1s"}, "no more than 1h0m0s of gaps"},
		{[]string{"-datagrams", "2000000"}, "-datagrams 2000000"},
		{[]string{"-spacing", "0s"}, "-spacing 0s"},
		{[]string{"-packet", "9000"}, "-packet 9000"},
		// Checked even where unused, and refused as unused.
		{[]string{"-duration", "100000h"}, "-duration 100000h0m0s: give at most"},
		{[]string{"-duration", "100000h"}, "-duration is used by -headline only"},
		{[]string{"-repeats", "3"}, "-repeats is used by -headline only"},
		{[]string{"-headline", "-profile", "80:10"}, "-profile is not used by -headline"},
		{[]string{"-headline", "-emulator=false"}, "-emulator is not used by -headline"},
		// Every problem, not the first only.
		{[]string{"-packet", "9000", "-spacing", "0s"}, "-spacing 0s"},
	} {
		_, err := parseFlags(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	for _, ok := range [][]string{nil, {"-headline"}, {"-headline", "-duration", "10m", "-repeats", "2", "-seed", "3", "-packet", "1200"},
		{"-profile", "80:10", "-bulk", "1s", "-bulk-warmup", "0", "-emulator=false", "-seed", "2"}} {
		if _, err := parseFlags(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// The verdict counts the rows that did not run and the rows read against
// the emulator that missed a target; rows with no emulator row to read
// against are neither.
func TestVerdictCounts(t *testing.T) {
	ms := time.Millisecond
	emu := row{profile: "a", carrier: onEmulator, goodput: 10, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true}}
	met := row{profile: "a", carrier: onVirtual, goodput: 10, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true}}
	miss := row{profile: "a", carrier: onRealTime, goodput: 5, echo: echoResult{p50: 80 * ms}, lost: []bool{false, true}}
	down := row{profile: "b", carrier: onEmulator, err: errNoEmulatorForTest}
	alone := row{profile: "b", carrier: onVirtual, goodput: 1}
	if err := verdict([]row{emu, met, alone}); err != nil {
		t.Errorf("all met, or not compared: %v", err)
	}
	err := verdict([]row{emu, met, miss, down, alone})
	if err == nil || !strings.Contains(err.Error(), "1 of 5 rows did not run") || !strings.Contains(err.Error(), "1 of 2 rows read against the emulator missed") {
		t.Errorf("got %v", err)
	}
	if err := verdict([]row{down, {profile: "b", carrier: onRealTime, err: errNoEmulatorForTest}}); err == nil ||
		!strings.Contains(err.Error(), "2 of 2 rows did not run") {
		t.Errorf("nothing ran: %v", err)
	}
}

// The agreement fails, with the count, when the emulator's rows cannot
// run: the in-process rows then have nothing to be read against.
func TestAgreementWithoutTheEmulatorFails(t *testing.T) {
	f := flags{profiles: []string{"80:10"}, seed: 1, emulator: true, probe: probeConfig{bulk: time.Second, packetSize: 1280, echoes: 5,
		echoGap: 10 * time.Millisecond, datagrams: 50, spacing: 4 * time.Millisecond}}
	var out strings.Builder
	err := agreement(t, &out, f, errNoEmulatorForTest)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 rows did not run") {
		t.Errorf("got %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "did not run: no emulator here") {
		t.Errorf("table:\n%s", out.String())
	}
	f.emulator = false
	out.Reset()
	if err := agreement(t, &out, f, nil); err != nil {
		t.Errorf("without the emulator column: %v\n%s", err, out.String())
	}
}

// The headline fails when its repeats could not be measured: over a link
// that loses 99% nothing connects.
func TestHeadlineCountsUnmeasuredRepeats(t *testing.T) {
	f := flags{hlProfile: "80:10:99", repeats: 2, duration: 3 * time.Second, warmup: time.Second, seed: 1, probe: probeConfig{packetSize: 1280}}
	c, err := f.headlineConfig()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = headline(t, &out, c)
	t.Logf("%v\n%s", err, out.String())
	if err == nil {
		t.Errorf("nothing measured, and no error")
	}
}
