package singleflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// RecordFile is the record a work directory holds.
const RecordFile = "results.json"

// summaryFile is the summary Write puts beside the record.
const summaryFile = "summary.md"

// Record is a work directory's RecordFile: the settings its runs were
// made with, the runs and their cells.
type Record struct {
	Profiles []string       `json:"profiles"`
	Losses   []float64      `json:"losses"`
	Flows    []RecordedFlow `json:"flows"`
	Repeats  int            `json:"repeats"`
	Duration string         `json:"duration"`
	Warmup   string         `json:"warmup"`
	// KeepAwake and KeepAwakeAuto are -keep-awake on and auto: with auto,
	// each run's host state has the probe that decided.
	KeepAwake     bool            `json:"keep_awake"`
	KeepAwakeAuto bool            `json:"keep_awake_auto,omitempty"`
	Window        time.Duration   `json:"departure_window_ns,omitempty"`
	Controller    quicreno.Params `json:"quicreno"`
	Results       []Result        `json:"results"`
	Cells         []Cell          `json:"cells"`
}

// RecordedFlow is a flow as the record names it: its name, the transport
// arm under it and the controller it pins.
type RecordedFlow struct {
	Name string `json:"name"`
	Arm  string `json:"arm"`
	CC   string `json:"cc,omitempty"`
}

// NewRecord is c's settings as the record holds them, with no runs.
func NewRecord(c Config) Record {
	var ps []string
	for _, p := range c.Profiles {
		ps = append(ps, p.String())
	}
	return Record{Profiles: ps, Losses: c.Losses, Flows: RecordedFlows(c.Flows), Repeats: c.Repeats, Duration: c.Duration.String(), Warmup: c.Warmup.String(),
		KeepAwake: c.Link.EmulatorKeepAwake, KeepAwakeAuto: c.Link.EmulatorKeepAwakeAuto, Window: c.Link.EmulatorDepartureWindow, Controller: c.Controller}
}

// RecordedFlows is how the record names flows.
func RecordedFlows(flows []measure.Arm) []RecordedFlow {
	out := make([]RecordedFlow, len(flows))
	for i, a := range flows {
		out[i] = RecordedFlow{Name: string(a), Arm: string(transport.ArmQUIC)}
		if cc, ok := a.PinnedCC(); ok {
			out[i].Arm, out[i].CC = string(transport.ArmTCP), cc
		}
	}
	return out
}

// settings is the record less its runs, to compare two records'.
func (r Record) settings() string {
	r.Results, r.Cells = nil, nil
	b, _ := json.Marshal(r)
	return string(b)
}

// Resume reads dir's record, if there is one, and returns its runs, failed
// ones included, when it was made with r's settings; other settings are
// an error.
func (r Record) Resume(dir string) ([]Result, error) {
	var had Record
	err := results.ReadJSON(filepath.Join(dir, RecordFile), &had)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("-workdir %s: %w; give another -workdir", dir, err)
	case had.settings() != r.settings():
		return nil, fmt.Errorf("-workdir %s holds singleflow runs made with other settings (%s); give the same flags to resume them, or another -workdir", dir, had.settings())
	}
	return had.Results, nil
}

// Write saves rs with their cells as dir's record and, when summary is
// set, their summary (Markdown, tcp-quicreno against quic) beside it as
// summary.md.
func (r Record) Write(dir string, rs []Result, summary bool) error {
	r.Results, r.Cells = rs, Summarise(rs)
	if err := results.WriteJSON(filepath.Join(dir, RecordFile), r); err != nil {
		return err
	}
	if !summary {
		return nil
	}
	md := Markdown(r.Cells, "tcp-"+quicreno.Name, "quic")
	return os.WriteFile(filepath.Join(dir, summaryFile), []byte(md), 0o644)
}

// runKey names a run.
type runKey struct {
	profile, flow string
	loss          float64
	repeat        int
}

func keyOf(r Result) runKey { return runKey{r.Profile, r.Flow, r.Loss, r.Repeat} }

// Measured returns a Config.Skip that skips the runs rs holds without an
// error, and how many those are.
func Measured(rs []Result) (skip func(Result) bool, n int) {
	done := map[runKey]bool{}
	for _, r := range rs {
		if r.Error == "" {
			done[keyOf(r)] = true
		}
	}
	return func(r Result) bool { return done[keyOf(r)] }, len(done)
}

// Replace puts r in place of the run of the same cell, flow and repeat
// in rs, or adds it.
func Replace(rs []Result, r Result) []Result {
	for i := range rs {
		if keyOf(rs[i]) == keyOf(r) {
			rs[i] = r
			return rs
		}
	}
	return append(rs, r)
}
