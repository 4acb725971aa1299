package simcheck

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// small is a probe configuration a test can afford.
var small = Probes{Bulk: 3 * time.Second, BulkWarmup: time.Second, PacketSize: 1280, Echoes: 10,
	EchoGap: 20 * time.Millisecond, Datagrams: 300, Spacing: 4 * time.Millisecond}

// TestProbesInVirtualTime: the probes over an in-process link in virtual
// time give the model's figures: an idle echo of 64 bytes (106 on the
// wire) over 80:10 takes exactly 80 ms and two serialisations, and a
// bulk transfer moves data at no more than the rate.
func TestProbesInVirtualTime(t *testing.T) {
	var r Row
	synctest.Test(t, func(t *testing.T) {
		r = probeAll(context.Background(), "80:10", onVirtual, shapedlink.BackendInProcess, 1, small)
	})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := 80*time.Millisecond + 2*106*8*time.Second/10e6
	if r.Echo.P50 != want || r.Echo.P99 != want || r.Echo.Lost != 0 {
		t.Errorf("echo p50 %v p99 %v, %d lost; want %v, %v, 0", r.Echo.P50, r.Echo.P99, r.Echo.Lost, want, want)
	}
	if r.Goodput <= 0 || r.Goodput > 10 || count(r.Lost) != 0 {
		t.Errorf("goodput %.3f Mbit/s over 10 Mbit/s, %d datagrams lost on a lossless link", r.Goodput, count(r.Lost))
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
	ref := Row{Carrier: onEmulator, Goodput: 10, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true, false}}
	for _, c := range []struct {
		r    Row
		want string
	}{
		{Row{Goodput: 9.8, Echo: Echo{P50: 80*ms + 150*time.Microsecond}, Lost: []bool{false, true, false}}, "met"},
		{Row{Goodput: 9.6, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true, false}}, "missed: [goodput]"},
		{Row{Goodput: 10, Echo: Echo{P50: 80*ms - 250*time.Microsecond}, Lost: []bool{false, true, false}}, "missed: [p50]"},
		{Row{Carrier: onRealTime, Goodput: 10, Echo: Echo{P50: 80*ms + 900*time.Microsecond}, Lost: []bool{false, true, false}}, "missed: [p50]"},
		{Row{Carrier: onVirtual, Goodput: 10, Echo: Echo{P50: 80*ms - 400*time.Microsecond}, Lost: []bool{false, true, false}}, "met (p50 not judged: no host)"},
		{Row{Carrier: onVirtual, Goodput: 9.6, Echo: Echo{P50: 80*ms - 400*time.Microsecond}, Lost: []bool{false, true, false}}, "missed: [goodput]"},
		{Row{Goodput: 10, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true, true}}, "missed: [pattern]"},
		{Row{Goodput: 10, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true}}, "missed: [pattern]"},
	} {
		if _, _, _, got := compare(c.r, &ref); got != c.want {
			t.Errorf("%+v against %+v: %q, want %q", c.r, ref, got, c.want)
		}
	}
	var b strings.Builder
	Table{[]Row{{Profile: "80:10", Carrier: onEmulator, Err: errNoEmulatorForTest}, {Profile: "80:10", Carrier: onVirtual, Goodput: 9}}}.Write(&b)
	if !strings.Contains(b.String(), "did not run: no emulator here") || !strings.Contains(b.String(), "9.000") {
		t.Errorf("table:\n%s", b.String())
	}
}

var errNoEmulatorForTest = errString("no emulator here")

type errString string

func (e errString) Error() string { return string(e) }

// The verdict counts the rows that did not run and the rows read against
// the emulator that missed a target; rows with no emulator row to read
// against are neither.
func TestVerdictCounts(t *testing.T) {
	ms := time.Millisecond
	emu := Row{Profile: "a", Carrier: onEmulator, Goodput: 10, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true}}
	met := Row{Profile: "a", Carrier: onVirtual, Goodput: 10, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true}}
	miss := Row{Profile: "a", Carrier: onRealTime, Goodput: 5, Echo: Echo{P50: 80 * ms}, Lost: []bool{false, true}}
	down := Row{Profile: "b", Carrier: onEmulator, Err: errNoEmulatorForTest}
	alone := Row{Profile: "b", Carrier: onVirtual, Goodput: 1}
	if err := (Table{[]Row{emu, met, alone}}).Verdict(); err != nil {
		t.Errorf("all met, or not compared: %v", err)
	}
	err := (Table{[]Row{emu, met, miss, down, alone}}).Verdict()
	if err == nil || !strings.Contains(err.Error(), "1 of 5 rows did not run") || !strings.Contains(err.Error(), "1 of 2 rows read against the emulator missed") {
		t.Errorf("got %v", err)
	}
	if err := (Table{[]Row{down, {Profile: "b", Carrier: onRealTime, Err: errNoEmulatorForTest}}}).Verdict(); err == nil ||
		!strings.Contains(err.Error(), "2 of 2 rows did not run") {
		t.Errorf("nothing ran: %v", err)
	}
}

// The agreement fails, with the count, when the emulator's rows cannot
// run: the in-process rows then have nothing to be read against.
func TestAgreementWithoutTheEmulatorFails(t *testing.T) {
	c := Config{Profiles: []string{"80:10"}, Seed: 1, Emulator: true, EmulatorUnavailable: errNoEmulatorForTest,
		Probes: Probes{Bulk: time.Second, PacketSize: 1280, Echoes: 5, EchoGap: 10 * time.Millisecond, Datagrams: 50, Spacing: 4 * time.Millisecond}}
	tab, err := Run(context.Background(), t, c)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	tab.Write(&out)
	if err := tab.Verdict(); err == nil || !strings.Contains(err.Error(), "1 of 3 rows did not run") {
		t.Errorf("got %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "did not run: no emulator here") {
		t.Errorf("table:\n%s", out.String())
	}
	c.Emulator, c.EmulatorUnavailable = false, nil
	out.Reset()
	if tab, err = Run(context.Background(), t, c); err != nil {
		t.Fatal(err)
	}
	tab.Write(&out)
	if err := tab.Verdict(); err != nil || len(tab.Rows) != 2 {
		t.Errorf("without the emulator column: %v\n%s", err, out.String())
	}
}

// The headline fails when its repeats could not be measured: over a link
// that loses 99% nothing connects.
func TestHeadlineCountsUnmeasuredRepeats(t *testing.T) {
	p, err := shapedlink.ParseProfile("80:10:99")
	if err != nil {
		t.Fatal(err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	h, err := RunHeadline(context.Background(), t, HeadlineConfig{Profile: p, Repeats: 2, Workload: w, PacketSize: 1280, Seed: 1})
	if err == nil {
		err = h.Verdict()
	}
	var out strings.Builder
	h.Write(&out)
	t.Logf("%v\n%s", err, out.String())
	if err == nil {
		t.Errorf("nothing measured, and no error")
	}
}
