package summary

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// keySample is one timed key of a live run, for export: its offset from
// the typing's start and key-to-draw (Analysis), its key-to-pixel (-1
// without -pixel or where not timed) and where its answer spent its time.
type keySample struct {
	Offset time.Duration `json:"offset_ns"`
	Draw   time.Duration `json:"draw_ns"`
	Pixel  time.Duration `json:"pixel_ns"`
	// Censored is set for a key not answered within the timeout: Draw is
	// then the timeout, and its KeyPath is not had.
	Censored bool `json:"censored,omitempty"`
	keydraw.KeyPath
}

// runKeys reads the timed keys of a live run of c from its traces and
// live.json, the censored ones among them, in the order they were typed.
func runKeys(c spicelive.Config, run liveRun) ([]keySample, *spicelive.LiveRecord, error) {
	dir, rec, err := run.Dir, run.Rec, run.Err
	if err == nil && (rec.Server == nil || rec.Client == nil) {
		err = errors.New("no role results")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, spicelive.LiveFile), err)
	}
	ctr, err := spicelive.ReadTrace(filepath.Join(dir, spicelive.ClientTrace))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, spicelive.ClientTrace), err)
	}
	str, err := spicelive.ReadTrace(filepath.Join(dir, spicelive.ServerTrace))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, spicelive.ServerTrace), err)
	}
	a := spicelive.AnalyseRun(c, ctr, rec.Server, rec.Client)
	if !slices.Equal(a.Samples, rec.Analysis.Samples) {
		return nil, nil, fmt.Errorf("%s: the trace's keys are not those live.json recorded", dir)
	}
	paths, err := keydraw.KeyPaths(ctr, str, a)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	pixel := map[time.Duration]time.Duration{}
	if rec.Pixel != nil {
		for _, k := range rec.Pixel.Keys {
			if k.Pixel >= 0 && k.Tunnel >= 0 {
				pixel[k.At+k.Tunnel] = k.Pixel
			}
		}
	}
	out := make([]keySample, len(a.Samples), len(a.Samples)+len(a.Censored))
	for i, s := range a.Samples {
		px, ok := pixel[s.Offset]
		if !ok {
			px = -1
		}
		out[i] = keySample{Offset: s.Offset, Draw: s.RTT, Pixel: px, KeyPath: paths[i]}
	}
	for _, s := range a.Censored {
		out = append(out, keySample{Offset: s.Offset, Draw: s.RTT, Pixel: -1, Censored: true})
	}
	slices.SortStableFunc(out, func(x, y keySample) int { return cmp.Compare(x.Offset, y.Offset) })
	return out, &rec, nil
}

// displayRate is the display channel's rate from the server, as the
// client end read it, in bins of width from the typing's start to its
// end: Mbit/s per bin.
func displayRate(tr *spicetrace.Trace, typingStart, typingEnd, width time.Duration) []float64 {
	if width <= 0 || typingEnd <= typingStart {
		return nil
	}
	bins := make([]float64, int((typingEnd-typingStart+width-1)/width))
	for _, r := range tr.Records {
		if r.ChannelType != "display" || r.Dir != spicetrace.ServerToClient || r.T < typingStart || r.T >= typingEnd {
			continue
		}
		bins[(r.T-typingStart)/width] += float64(r.Size) * 8 / width.Seconds() / 1e6
	}
	return bins
}

// runWaits is the medians of one run's timed keys past the warm-up: its
// key-to-draw and each part of it.
type runWaits struct {
	draw, up, server, unread, down time.Duration
	ahead                          int64
}

// medianWaits reads a live run's keys and takes their medians.
func medianWaits(c spicelive.Config, run liveRun) (runWaits, error) {
	dir := run.Dir
	ks, _, err := runKeys(c, run)
	if err != nil {
		return runWaits{}, err
	}
	var draw, up, server, unread, down []time.Duration
	var ahead []int64
	for _, k := range ks {
		if k.Offset < c.Warmup || k.Censored {
			continue
		}
		draw, up, server, unread, down = append(draw, k.Draw), append(up, k.Up), append(server, k.Server), append(unread, k.Unread), append(down, k.Down)
		ahead = append(ahead, k.Ahead)
	}
	if len(draw) == 0 {
		return runWaits{}, fmt.Errorf("%s: no key past the warm-up", dir)
	}
	return runWaits{draw: medianOf(draw), up: medianOf(up), server: medianOf(server), unread: medianOf(unread), down: medianOf(down), ahead: medianOf(ahead)}, nil
}

// medianOf is the lower median of xs (which it sorts).
func medianOf[T int64 | time.Duration](xs []T) T {
	slices.Sort(xs)
	return xs[(len(xs)-1)/2]
}
