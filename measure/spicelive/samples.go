package spicelive

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
)

// Files WriteSamples writes.
const (
	// KeysCSV has a row per timed key of every live run: cell, arm,
	// repeat, the key's number in its run, its offset from the typing's
	// start, key-to-draw, key-to-pixel (empty where not had), and its
	// KeyPath (unread empty where the trace lacks it), times in ms.
	KeysCSV = "keys.csv"
	// RunsCSV has a row per live run: cell, arm, repeat, whether it
	// failed, its timeouts, the display's bytes and Mbit/s in the measured
	// part, and the display's rate over each second of the typing; then
	// the picture's figures (pictureHeader), empty in files written
	// before them (ReadRuns reads both).
	RunsCSV = "runs.csv"
)

// keysHeader and runsHeader are the two files' first rows.
var (
	keysHeader = []string{"cell", "arm", "repeat", "key", "offset_ms", "draw_ms", "pixel_ms", "up_ms", "server_ms", "unread_ms", "down_ms", "ahead_bytes"}
	runsHeader = append([]string{"cell", "arm", "repeat", "failed", "timeouts", "display_bytes", "display_mbit", "rate_by_second_mbit"},
		pictureHeader...)
)

// WriteSamples writes the per-key samples of c.Workdir's live runs to
// dir as KeysCSV and RunsCSV: enough to recompute every live percentile
// and verdict of its summary (whose first -warmup of each run is left
// out) and to see where each key's answer waited.
func WriteSamples(dir string, c Config) error {
	runs, err := results.Load(c.ReadingDir(ReadingLive))
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(runs) == 0 {
		return fmt.Errorf("%s holds no live runs: run the live reading first", c.Workdir)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var keys, rows [][]string
	for _, r := range runs {
		base := []string{r.Cell.Dir(), r.Arm, strconv.Itoa(r.Repeat)}
		if r.Failed != "" {
			row := append(base, "true")
			rows = append(rows, append(row, make([]string, len(runsHeader)-len(row))...))
			continue
		}
		rd := results.RunDir(c.ReadingDir(ReadingLive), r.Cell, r.Arm, r.Repeat)
		ks, rec, err := RunKeys(c, rd)
		if err != nil {
			return err
		}
		for i, k := range ks {
			keys = append(keys, append(append([]string{}, base...), strconv.Itoa(i+1), msText(k.Offset), msText(k.Draw), optMs(k.Pixel),
				msText(k.Up), msText(k.Server), optMs(k.Unread), msText(k.Down), strconv.FormatInt(k.Ahead, 10)))
		}
		row := append(base, "false", strconv.Itoa(r.Timeouts), strconv.FormatInt(r.BulkBytes, 10), strconv.FormatFloat(r.ThroughputMbit, 'f', 3, 64))
		tr, err := readTrace(filepath.Join(rd, ClientTrace))
		if err != nil {
			return err
		}
		rate := ""
		for i, m := range DisplayRate(tr, rec.Client.TypingStart, rec.Client.TypingEnd, time.Second) {
			if i > 0 {
				rate += " "
			}
			rate += strconv.FormatFloat(m, 'f', 2, 64)
		}
		rows = append(rows, append(append(row, rate), pictureCells(rec.Picture)...))
	}
	return errors.Join(writeCSV(filepath.Join(dir, KeysCSV), keysHeader, keys), writeCSV(filepath.Join(dir, RunsCSV), runsHeader, rows))
}

func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// optMs is ms, empty for a figure not had (-1).
func optMs(d time.Duration) string {
	if d < 0 {
		return ""
	}
	return msText(d)
}

func writeCSV(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = writeRows(f, header, rows)
	return errors.Join(err, f.Close())
}

func writeRows(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
