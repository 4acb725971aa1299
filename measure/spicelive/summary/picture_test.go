package summary

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/spicelive/picture"
)

// TestReadRuns reads every committed runs.csv, written before the
// picture's columns, and a new one with them, back to the same figures.
func TestReadRuns(t *testing.T) {
	paths, err := filepath.Glob("../../../docs/results/spicelive*/runs.csv")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../../../docs/results/spicelive*/*/runs.csv")
	paths = append(paths, more...)
	if len(paths) == 0 {
		t.Fatal("no committed runs.csv found")
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := readRuns(f)
		f.Close()
		if err != nil || len(rows) == 0 {
			t.Fatalf("%s: %d rows, %v", p, len(rows), err)
		}
		for _, r := range rows {
			// A file with the picture's columns has it for every measured
			// run; an older one for none.
			_, hasColumns := r.Fields["client_frames"]
			if r.Cell == "" || r.Arm == "" || r.Repeat < 1 || (r.Picture != nil) != (hasColumns && !r.Failed) {
				t.Errorf("%s: row %s %s r%d: picture %+v with the columns %v", p, r.Cell, r.Arm, r.Repeat, r.Picture, hasColumns)
			}
		}
	}
	pic := &picture.PictureRecord{ClientFrames: 300, DrawnFrames: 500, ClientFPS: 12.5, DrawnFPS: 20.83, Delivered: 0.6, Good: true,
		StreamShare: 0.92, ImageShare: 0.01, BytesPerFrame: 4321}
	base := []string{"80-10", "tcp", "1", "false", "0", "1000", "1.000", "1.00 2.00"}
	var b strings.Builder
	failed := append(slices.Clone(base[:3]), "true")
	failed = append(failed, make([]string, len(runsHeader)-len(failed))...)
	if err := writeRows(&b, runsHeader, [][]string{slices.Concat(base, make([]string, len(recordHeader)), pictureCells(pic)), failed}); err != nil {
		t.Fatal(err)
	}
	rows, err := readRuns(strings.NewReader(b.String()))
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if got := rows[0].Picture; got == nil || *got != *pic {
		t.Errorf("picture read back as %+v, want %+v", got, pic)
	}
	if !rows[1].Failed || rows[1].Picture != nil {
		t.Errorf("a failed run read back as %+v", rows[1])
	}
}

// TestPictureColumns checks the display table's picture cells and marks:
// good by the rule, not good under it, and Xspice's own rate flagged when
// it drew under half the workload's.
func TestPictureColumns(t *testing.T) {
	for _, c := range []struct {
		p    *picture.PictureRecord
		want []string
		not  []string
	}{
		{&picture.PictureRecord{ClientFPS: 12, DrawnFPS: 24, Delivered: 0.5, Good: true, StreamShare: 0.9, ImageShare: 0.05, BytesPerFrame: 20000, NominalFPS: 25},
			[]string{"12.0 | 24.0 | 50% | 90% | 5% | 20.0 | good"}, []string{"not good", "Xspice drew"}},
		{&picture.PictureRecord{ClientFPS: 2, DrawnFPS: 20, Delivered: 0.1, StreamShare: 0.9, NominalFPS: 25},
			[]string{"**not good**"}, []string{"Xspice drew"}},
		{&picture.PictureRecord{ClientFPS: 2, DrawnFPS: 2, Delivered: 1, ImageShare: 0.9, NominalFPS: 25},
			[]string{"**not good**: the client saw under 50% of the workload's 25 frames/s; Xspice drew under 50% of the workload's 25 frames/s"}, nil},
		{nil, []string{"no figures"}, nil},
	} {
		got := pictureColumns(c.p)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", c.p, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%+v: %q has %q", c.p, got, n)
			}
		}
		if n := strings.Count(got, "|"); n != 6 {
			t.Errorf("%q: %d cells, want 7", got, n+1)
		}
	}
}
