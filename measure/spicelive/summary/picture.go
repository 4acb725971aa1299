package summary

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/stats"
)

// runPicture is the picture of a live run, or nil when its record has
// none or does not read.
func runPicture(run liveRun) *picture.PictureRecord {
	if run.Err != nil {
		return nil
	}
	return run.Rec.Picture
}

// pictureMedians are the medians, over s's measured live runs with a
// picture, of frames per second at the client, the share of the drawn
// frames that reached it, and the stream share, as table cells ("-" when
// no run has a picture).
func pictureMedians(c spicelive.Config, s *series) []string {
	var fps, of, stream []float64
	for _, run := range s.runs {
		if run.Failed != "" {
			continue
		}
		if p := runPicture(run); p != nil {
			fps, of, stream = append(fps, p.ClientFPS), append(of, p.Delivered), append(stream, p.StreamShare)
		}
	}
	if len(fps) == 0 {
		return []string{"-", "-", "-"}
	}
	m := func(xs []float64) float64 { v, _ := stats.Median(xs); return v }
	return []string{fmt.Sprintf("%.1f", m(fps)), fmt.Sprintf("%.0f%%", 100*m(of)), fmt.Sprintf("%.0f%%", 100*m(stream))}
}

// pictureColumns are a run's picture as the display table's cells:
// frames per second at the client, drawn, the share delivered, the
// stream and image shares, KB per delivered frame, and the mark against
// the good-picture rule.
func pictureColumns(p *picture.PictureRecord) string {
	if p == nil {
		return "- | - | - | - | - | - | no figures"
	}
	mark := "good"
	if !p.Good {
		mark = fmt.Sprintf("**not good**: the client saw under %.0f%% of the workload's %.0f frames/s", 100*picture.GoodPictureShare, p.NominalFPS)
	}
	if p.NominalFPS > 0 && p.DrawnFPS < picture.GoodPictureShare*p.NominalFPS {
		mark += fmt.Sprintf("; Xspice drew under %.0f%% of the workload's %.0f frames/s", 100*picture.GoodPictureShare, p.NominalFPS)
	}
	return fmt.Sprintf("%.1f | %.1f | %.0f%% | %.0f%% | %.0f%% | %.1f | %s", p.ClientFPS, p.DrawnFPS, 100*p.Delivered, 100*p.StreamShare,
		100*p.ImageShare, p.BytesPerFrame/1000, mark)
}

// pictureHeader are runs.csv's picture columns, after its older ones:
// the frames at the client and drawn in the measured part, the same per
// second, the first over the second, the display's shares sent as a
// video stream and as images, its bytes per frame at the client, and
// whether the picture was good (GoodPictureShare). They are empty for a
// run without the figures.
var pictureHeader = []string{"client_frames", "drawn_frames", "client_fps", "drawn_fps", "of_drawn", "stream_share", "image_share",
	"bytes_per_frame", "good_picture"}

// pictureCells are p's runs.csv columns (pictureHeader), empty for nil.
func pictureCells(p *picture.PictureRecord) []string {
	if p == nil {
		return make([]string, len(pictureHeader))
	}
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	return []string{strconv.Itoa(p.ClientFrames), strconv.Itoa(p.DrawnFrames), f(p.ClientFPS, 2), f(p.DrawnFPS, 2), f(p.Delivered, 3),
		f(p.StreamShare, 3), f(p.ImageShare, 3), f(p.BytesPerFrame, 0), strconv.FormatBool(p.Good)}
}

// runRow is one row of a runs.csv (RunsCSV) as readRuns reads it.
type runRow struct {
	Cell, Arm string
	Repeat    int
	Failed    bool
	// Fields are the row's columns by header name; a file written before
	// a column was added has none of it.
	Fields map[string]string
	// Picture holds the picture's figures when the row has them.
	Picture *picture.PictureRecord
}

// readRuns reads a runs.csv written by WriteSamples, old or new: columns
// are found by name, so a file without the picture's columns (or with
// columns added after them) reads, its rows without Picture.
func readRuns(r io.Reader) ([]runRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("runs.csv: no header")
	}
	head := rows[0]
	for _, want := range runsHeader[:4] {
		if !slices.Contains(head, want) {
			return nil, fmt.Errorf("runs.csv: no %q column in its header %v", want, head)
		}
	}
	var out []runRow
	for i, row := range rows[1:] {
		rr := runRow{Fields: map[string]string{}}
		for j, name := range head {
			if j < len(row) {
				rr.Fields[name] = row[j]
			}
		}
		rr.Cell, rr.Arm = rr.Fields["cell"], rr.Fields["arm"]
		if rr.Repeat, err = strconv.Atoi(rr.Fields["repeat"]); err != nil {
			return nil, fmt.Errorf("runs.csv row %d: repeat %q", i+2, rr.Fields["repeat"])
		}
		rr.Failed = rr.Fields["failed"] == "true"
		if rr.Picture, err = pictureFromFields(rr.Fields); err != nil {
			return nil, fmt.Errorf("runs.csv row %d: %w", i+2, err)
		}
		out = append(out, rr)
	}
	return out, nil
}

// pictureFromFields reads the picture's columns of a runs.csv row, nil
// when it has none.
func pictureFromFields(f map[string]string) (*picture.PictureRecord, error) {
	if f["client_frames"] == "" {
		return nil, nil
	}
	var p picture.PictureRecord
	var errs []error
	atoi := func(s string) int { n, err := strconv.Atoi(s); errs = append(errs, err); return n }
	num := func(s string) float64 { v, err := strconv.ParseFloat(s, 64); errs = append(errs, err); return v }
	p.ClientFrames, p.DrawnFrames = atoi(f["client_frames"]), atoi(f["drawn_frames"])
	p.ClientFPS, p.DrawnFPS, p.Delivered = num(f["client_fps"]), num(f["drawn_fps"]), num(f["of_drawn"])
	p.StreamShare, p.ImageShare, p.BytesPerFrame = num(f["stream_share"]), num(f["image_share"]), num(f["bytes_per_frame"])
	g, err := strconv.ParseBool(f["good_picture"])
	p.Good = g
	if err := errors.Join(append(errs, err)...); err != nil {
		return nil, fmt.Errorf("the picture's columns: %w", err)
	}
	return &p, nil
}
