package summary

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
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
	// before them (readRuns reads both); last, when runs had cross flows,
	// the neighbours' figures (neighbourHeader).
	RunsCSV = "runs.csv"
)

// keysHeader and runsHeader are the two files' first rows.
var (
	keysHeader = []string{"cell", "arm", "repeat", "key", "offset_ms", "draw_ms", "pixel_ms", "up_ms", "server_ms", "unread_ms", "down_ms", "ahead_bytes", "censored"}
	runsHeader = slices.Concat([]string{"cell", "arm", "repeat", "failed", "timeouts", "display_bytes", "display_mbit", "rate_by_second_mbit"},
		recordHeader, pictureHeader)
)

// CheckSamplesDir refuses a samples directory that is, or whose
// KeysCSV or RunsCSV is, a symbolic link: writing the samples would
// overwrite what it points to.
func CheckSamplesDir(dir string) error {
	for _, p := range []string{dir, filepath.Join(dir, KeysCSV), filepath.Join(dir, RunsCSV)} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("-samples: %s is a symbolic link, which the samples would be written through: give a directory of its own", p)
		}
	}
	return nil
}

// WriteSamples writes the per-key samples of c.Workdir's live runs to
// dir as KeysCSV and RunsCSV: enough to recompute every live percentile
// and verdict of its summary (whose first -warmup of each run is left
// out) and to see where each key's answer waited.
func WriteSamples(dir string, c spicelive.Config) error {
	if err := CheckSamplesDir(dir); err != nil {
		return err
	}
	runs, err := results.LoadExtra[spicelive.LiveRecord](c.ReadingDir(spicelive.ReadingLive), spicelive.LiveFile)
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
			row := append(base, "true", "", "", "", "", r.Started.UTC().Format(time.RFC3339))
			rows = append(rows, append(row, make([]string, len(runsHeader)-len(row))...))
			continue
		}
		rd := r.Dir
		ks, rec, err := runKeys(c, r)
		if err != nil {
			return err
		}
		for i, k := range ks {
			row := append(append([]string{}, base...), strconv.Itoa(i+1), msText(k.Offset), msText(k.Draw), optMs(k.Pixel))
			if k.Censored {
				row = append(row, "", "", "", "", "", "true")
			} else {
				row = append(row, msText(k.Up), msText(k.Server), optMs(k.Unread), msText(k.Down), strconv.FormatInt(k.Ahead, 10), "")
			}
			keys = append(keys, row)
		}
		row := append(base, "false", strconv.Itoa(r.Timeouts), strconv.FormatInt(r.BulkBytes, 10), strconv.FormatFloat(r.ThroughputMbit, 'f', 3, 64))
		tr, err := spicelive.ReadTrace(filepath.Join(rd, spicelive.ClientTrace))
		if err != nil {
			return err
		}
		rate := ""
		for i, m := range displayRate(tr, rec.Client.TypingStart, rec.Client.TypingEnd, time.Second) {
			if i > 0 {
				rate += " "
			}
			rate += strconv.FormatFloat(m, 'f', 2, 64)
		}
		rows = append(rows, slices.Concat(row, []string{rate}, runRecordColumns(r.Run, rec), pictureCells(rec.Picture)))
	}
	head := runsHeader
	if hasCross(runs) { // one row per run, in order
		head = slices.Concat(runsHeader, neighbourHeader)
		for i, r := range runs {
			rows[i] = append(rows[i], neighbourCells(r)...)
		}
	}
	return errors.Join(writeCSV(filepath.Join(dir, KeysCSV), keysHeader, keys), writeCSV(filepath.Join(dir, RunsCSV), head, rows))
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

// runRecordColumns are a live run's columns that say when and how it ran:
// its start, its place in its repeat's order, the emulator's lateness each
// way, the host's CPU, and its keys counted at the timeout.
func runRecordColumns(r results.Run, rec *spicelive.LiveRecord) []string {
	out := []string{r.Started.UTC().Format(time.RFC3339), ""}
	if rec.Position > 0 {
		out[1] = strconv.Itoa(rec.Position)
	}
	late := map[string][2]string{}
	if sh := r.Link.Shaper; sh != nil {
		for _, d := range sh.Directions {
			late[d.Direction] = [2]string{strconv.FormatFloat(d.LateP99Ms, 'f', 3, 64), strconv.FormatFloat(d.LateMaxMs, 'f', 3, 64)}
		}
	}
	s2c, c2s := late["server->client"], late["client->server"]
	out = append(out, s2c[0], s2c[1], c2s[0], c2s[1])
	if u := rec.HostCPU; u != nil {
		out = append(out, strconv.FormatFloat(u.Busy, 'f', 3, 64), strconv.FormatFloat(u.Steal, 'f', 3, 64))
	} else {
		out = append(out, "", "")
	}
	return append(out, strconv.Itoa(len(rec.Analysis.Censored)))
}
