package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// Claim is a work directory this process holds (Matrix.Claim), with what
// claiming it made, so that a matrix refused before any run (the two-host
// daemon refusing the driver) can leave the directory as it found it.
type Claim struct {
	unlock func()
	once   sync.Once
	// made are the directories and files the claim created, in the order
	// it created them.
	made []string
}

// Release gives up the lock; a second call does nothing.
func (c *Claim) Release() { c.once.Do(c.unlock) }

// Undo removes what the claim made (matrix.json, .lock, directories it
// created, each only if still empty), latest first, and releases the
// lock. Only for a matrix that ran nothing.
func (c *Claim) Undo() {
	for i := len(c.made) - 1; i >= 0; i-- {
		os.Remove(c.made[i]) // a directory that is not empty stays
	}
	c.Release()
}

// missingDirs are dir and its ancestors that do not exist, outermost
// first: what MkdirAll(dir) will make.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, os.ErrNotExist) {
			break
		}
		out = append([]string{d}, out...)
		if filepath.Dir(d) == d {
			break
		}
	}
	return out
}

// Claim makes the work directory, locks it for this process, and checks
// that it was made for this matrix (matrix.json, written if it is new); a
// refusal wraps ErrWorkdir. The Claim releases the lock, or undoes itself.
func (m *Matrix) Claim() (*Claim, error) {
	c := &Claim{made: missingDirs(m.Workdir)}
	if err := os.MkdirAll(m.Workdir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWorkdir, err)
	}
	lock := filepath.Join(m.Workdir, results.LockFile)
	if _, err := os.Lstat(lock); errors.Is(err, os.ErrNotExist) {
		c.made = append(c.made, lock)
	}
	var err error
	c.unlock, err = results.Lock(m.Workdir)
	if err != nil {
		// Another process may hold it: nothing here is this claim's to
		// remove.
		return nil, fmt.Errorf("%w: %v", ErrWorkdir, err)
	}
	mf := filepath.Join(m.Workdir, matrixFile)
	var prev matrixRecord
	switch rerr := results.ReadJSON(mf, &prev); {
	case rerr == nil:
		if diffs := diffRecords(prev, m.record()); len(diffs) > 0 {
			err = fmt.Errorf("%w: %s holds runs of a different matrix (%s); give the same settings to resume it, or another -workdir for this one",
				ErrWorkdir, m.Workdir, strings.Join(diffs, "; "))
		}
	case errors.Is(rerr, os.ErrNotExist):
		c.made = append(c.made, mf)
		err = results.WriteJSON(mf, m.record())
	default:
		err = fmt.Errorf("%w: %v (remove %s if the directory holds no runs you need)", ErrWorkdir, rerr, mf)
	}
	if err != nil {
		c.Undo()
		return nil, err
	}
	return c, nil
}

// matrixRecord is what matrix.json records: everything that decides what a
// run measures, so that a work directory is only ever resumed with the same
// matrix. Workdir is for the reader and is not compared.
type matrixRecord struct {
	Profiles []string         `json:"profiles"`
	Losses   []float64        `json:"losses"`
	CCs      []string         `json:"ccs"`
	Arms     []measure.Arm    `json:"arms"`
	Repeats  int              `json:"repeats"`
	Workload spicelike.Config `json:"workload"`
	Workdir  string           `json:"workdir"`
	Qlog     bool             `json:"qlog"`
	// Backend is the link backend asked for: "" (netem where the kernel
	// has it), "netem" or "emulator". Seed is the emulator's loss seed (0:
	// random per run).
	Backend string `json:"backend,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`
	// Offload is the -offload mode: "keep", or left out for wire (the
	// default, and every record written before the mode existed).
	Offload offloadRecord `json:"offload,omitempty"`
	// KeepAwake and DepartureWindow are the emulator's settings asked for
	// (-keep-awake, -departure-window); both left out when off, as in
	// every record written before they were on by default.
	KeepAwake        bool          `json:"keep_awake,omitempty"`
	DepartureWindow  time.Duration `json:"departure_window_ns,omitempty"`
	Sessions         []int         `json:"sessions,omitempty"`
	BulkCapFractions []float64     `json:"bulk_cap_fractions,omitempty"`
	// Axes are the matrix's own axes (Matrix.Axes), in order; left out
	// when it has none, as every record written before they existed.
	Axes []axisRecord `json:"axes,omitempty"`
	// Shard is the share of the matrix this directory holds, "i/n"; empty
	// for the whole matrix.
	Shard string `json:"shard,omitempty"`
	// Remote is the two-host daemon's address (never its secret), so a
	// work directory is resumed against the same daemon.
	Remote string `json:"remote,omitempty"`
	// Controller is quicreno's settings when CCs name it.
	Controller string `json:"quicreno,omitempty"`
}

func (m *Matrix) record() matrixRecord {
	ctl := ""
	if p, ok := m.Quicreno(); ok {
		ctl = p.String()
	}
	return matrixRecord{
		Profiles: profileTexts(m.Profiles), Losses: m.Losses, CCs: m.CCs, Arms: m.Arms, Repeats: m.Repeats,
		Workload: m.Workload, Workdir: m.Workdir, Qlog: m.Qlog,
		Backend: string(m.Link.Backend), Seed: m.Link.Seed, Offload: offloadRecord(m.Link.Offload),
		KeepAwake: m.Link.EmulatorKeepAwake, DepartureWindow: m.Link.EmulatorDepartureWindow,
		Sessions: m.Sessions, BulkCapFractions: m.BulkCapFractions,
		Axes:       axisRecords(m.Axes),
		Shard:      m.Shard.recordText(),
		Remote:     m.Remote,
		Controller: ctl,
	}
}

// axisRecord is one of a matrix's own axes as matrix.json records it.
type axisRecord struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

func axisRecords(axes []Axis) []axisRecord {
	var out []axisRecord
	for _, a := range axes {
		out = append(out, axisRecord{Name: a.Name, Values: a.Values})
	}
	return out
}

// diffRecords names each field (by its JSON name) in which two records
// differ, with both values, compared as JSON so that what is written is
// what is compared.
func diffRecords(had, want matrixRecord) []string {
	return diffFields("", reflect.ValueOf(had), reflect.ValueOf(want))
}

// diffFields compares two structs of one type field by field, descending
// into struct fields so that a difference is named as "workload.duration"
// rather than shown as two whole workloads.
func diffFields(prefix string, a, b reflect.Value) []string {
	var diffs []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() || prefix+name == "workdir" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ja, _ := json.Marshal(a.Field(i).Interface())
		jb, _ := json.Marshal(b.Field(i).Interface())
		switch {
		case bytes.Equal(ja, jb):
		case f.Type.Kind() == reflect.Struct:
			diffs = append(diffs, diffFields(prefix+name+".", a.Field(i), b.Field(i))...)
		default:
			diffs = append(diffs, fmt.Sprintf("%s%s: %s there, %s asked", prefix, name, ja, jb))
		}
	}
	return diffs
}

// profileTexts are profiles as matrix.json records them.
func profileTexts(profiles []shapedlink.Profile) []string {
	var texts []string
	for _, p := range profiles {
		texts = append(texts, p.String())
	}
	return texts
}

// offloadRecord is the offload mode as matrix.json records it: "keep", or
// nothing at all for wire (the field is omitted when empty), so a wire
// matrix's record is what it was before the mode existed and a record
// without the field reads as wire. It is written "wire" where it is
// shown, so that a refused resume names both modes.
type offloadRecord shapedlink.OffloadMode

// MarshalJSON writes the mode by its name (shapedlink.OffloadMode.String);
// omitempty keeps wire out of the file, so this is what a comparison of
// records shows.
func (o offloadRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal(o.mode().String())
}

// UnmarshalJSON reads "wire" (or nothing) as wire and "keep" as keep
// (shapedlink.ParseOffloadMode), and refuses anything else.
func (o *offloadRecord) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("offload: %w", err)
	}
	if s == "" {
		s = shapedlink.OffloadWire.String()
	}
	m, err := shapedlink.ParseOffloadMode(s)
	if err != nil {
		return fmt.Errorf("offload: %w", err)
	}
	*o = offloadRecord(m)
	return nil
}

// mode is the shapedlink mode the record names.
func (o offloadRecord) mode() shapedlink.OffloadMode { return shapedlink.OffloadMode(o) }
