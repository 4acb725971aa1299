package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// TestKeepOffloadEndToEnd runs the tcp and quic arms at 5 ms / 1 Gbit/s
// over emulated links whose ends keep segmentation offload, as cpucost's
// -offload keep does: matrix.json and every run record say keep, kernel
// TCP's super-packets crossed the link (the ends really kept their
// offloads), the QUIC run's offload evidence still proves quic-go sent
// one datagram per write, and the summary neither takes TCP's
// super-packets for a QUIC failure nor warns about the link.
func TestKeepOffloadEndToEnd(t *testing.T) {
	shapedlinktest.Need(t)
	m := tinyMatrix(t, "tcp", "quic")
	p, err := shapedlink.ParseProfile("5:1000")
	if err != nil {
		t.Fatal(err)
	}
	m.Profiles, m.Losses = []shapedlink.Profile{p}, []float64{0}
	m.Link = shapedlink.Options{Backend: shapedlink.BackendEmulator, Offload: shapedlink.OffloadKeep}
	if err := Run(context.Background(), m, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(m.Workdir, "matrix.json")); err != nil || !bytes.Contains(b, []byte(`"offload": "keep"`)) {
		t.Errorf("matrix.json does not record keep (%v):\n%s", err, b)
	}
	runs, err := results.Load(m.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs recorded, want 2", len(runs))
	}
	for _, r := range runs {
		if r.Failed != "" {
			t.Fatalf("%s failed: %s", r.Arm, r.Failed)
		}
		checkKeptLink(t, m.Workdir, r)
		if sh := r.Link.Shaper; sh != nil && len(sh.Directions) > 0 {
			d := sh.Directions[0]
			t.Logf("%s: %.1f Mbit/s (test output); server->client: %d super-packets in, %d out, %d wire segments forwarded; queue check %v, counters %v",
				r.Arm, r.ThroughputMbit, d.SuperPacketsIn, d.SuperPacketsOut, d.Forwarded, verdict(r.GSOQueue), verdict(r.GSOCounters))
		}
		switch r.Arm {
		case string(transport.ArmTCP):
			// The link judged them per segment; the offload check is
			// for the QUIC arms and has nothing to say of them.
			if sh := r.Link.Shaper; sh == nil || len(sh.Directions) == 0 || sh.Directions[0].SuperPacketsIn == 0 {
				t.Errorf("tcp: no super-packet reached the link from the server, so its ends did not keep their offloads: %+v", r.Link.Shaper)
			}
			if r.GSOQueue != nil || r.GSOCounters != nil {
				t.Errorf("tcp: the run has a GSO verdict (queue %+v, counters %+v)", r.GSOQueue, r.GSOCounters)
			}
		case string(transport.ArmQUIC):
			if r.GSOCounters == nil || r.GSOCounters.Verdict != gsocheck.Off || r.GSOCounters.Oversize != 0 {
				t.Errorf("quic: the egress counters do not prove GSO off: %+v", r.GSOCounters)
			}
			if r.GSOQueue != nil && r.GSOQueue.Verdict == gsocheck.On {
				t.Errorf("quic: the queue says GSO on: %+v", r.GSOQueue)
			}
			if len(r.QUICGSO) == 0 || slices.Contains(r.QUICGSO, true) {
				t.Errorf("quic: quic-go's own GSO state %v, want false on every connection", r.QUICGSO)
			}
		}
	}
	checkKeptSummary(t, runs)
}

// checkKeptLink: the run's link record, as written, names keep; every
// applied line says the emulator kept offloads; the host state agrees.
func checkKeptLink(t *testing.T, workdir string, r results.Run) {
	t.Helper()
	if l := linkJSON(t, workdir, r); r.Link.Offload != "keep" || !bytes.Contains(l, []byte(`"offload":"keep"`)) {
		t.Errorf("%s: the run's link does not record keep: %s", r.Arm, l)
	}
	for _, a := range r.Link.Applied {
		if !strings.Contains(a, "offload keep") {
			t.Errorf("%s: applied line %q does not say offload keep", r.Arm, a)
		}
	}
	var hs shapedlink.HostState
	if err := json.Unmarshal(r.Host, &hs); err != nil || hs.OffloadMode != shapedlink.OffloadKeep {
		t.Errorf("%s: host state's offload mode %q (%v), want keep", r.Arm, hs.OffloadMode, err)
	}
}

// checkKeptSummary: the summary describes the link as keeping offloads,
// warns of no GSO trouble on the tcp arm and finds none on the quic arm.
func checkKeptSummary(t *testing.T, runs []results.Run) {
	t.Helper()
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Warnings {
		if w.Kind == "gso" && (w.Arm == string(transport.ArmTCP) || strings.Contains(w.Detail, ": on in")) {
			t.Errorf("the summary reports GSO trouble: %+v", w)
		}
		if w.Kind == "backend" {
			t.Errorf("the summary warns about the link: %+v", w)
		}
	}
	for _, c := range rep.Cells {
		for _, a := range c.Arms {
			for _, g := range a.GSO {
				if a.Arm == string(transport.ArmTCP) || g.On > 0 {
					t.Errorf("%s: offload check %+v", a.Arm, g)
				}
			}
		}
	}
	var md strings.Builder
	if err := render.Markdown(&md, runs, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "; offload keep (") {
		t.Errorf("the summary's link line does not say offload keep:\n%s", md.String())
	}
}

// verdict is a GSO result's verdict for a log line, "none" when absent.
func verdict(g *gsocheck.Result) string {
	if g == nil {
		return "none"
	}
	return string(g.Verdict)
}
