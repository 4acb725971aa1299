package spicelike

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// recordings holds the shipped recordings, <name>.json.gz each: a Replay
// as gzip-compressed JSON.
//
//go:embed recordings/*.json.gz
var recordings embed.FS

const recordingExt = ".json.gz"

// Recordings names the recorded sessions shipped with the package, sorted:
// one live SPICE session per display workload of measure/spicelive
// ("images", "video"), each recorded while the workload filled the display
// channel. Recording returns one.
func Recordings() []string {
	ents, _ := recordings.ReadDir("recordings")
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), recordingExt); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Recording returns the shipped recording name (one of Recordings) as a
// Replay to set as Config.Replay: it needs no X server or SPICE program.
// Each call returns a new copy.
func Recording(name string) (*Replay, error) {
	if !slices.Contains(Recordings(), name) {
		return nil, fmt.Errorf("spicelike: no recording %q: the recordings are %s", name, strings.Join(Recordings(), ", "))
	}
	b, err := recordings.ReadFile(path.Join("recordings", name+recordingExt))
	if err != nil {
		return nil, err
	}
	r, err := ReadReplay(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("spicelike: recording %s: %w", name, err)
	}
	return r, nil
}

// ReadReplay reads a Replay as JSON, gzip-compressed or not, and checks it
// (Validate).
func ReadReplay(rd io.Reader) (*Replay, error) {
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(z); err != nil {
			return nil, fmt.Errorf("spicelike: reading a gzip-compressed replay: %w", err)
		}
	}
	var r Replay
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("spicelike: a replay is JSON as Replay marshals: %w", err)
	}
	return &r, r.Validate()
}

// WriteReplay writes r as gzip-compressed JSON, as the shipped recordings
// are kept.
func WriteReplay(w io.Writer, r *Replay) error {
	z, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(z).Encode(r); err != nil {
		return err
	}
	return z.Close()
}

// Trim returns the first span of r: the scheduled messages and keys before
// span, and the echoes of those keys, with the keys numbered again from 0.
// A span of r.Span or more returns a copy of r.
func (r *Replay) Trim(span time.Duration) (*Replay, error) {
	if span <= 0 {
		return nil, fmt.Errorf("spicelike: trim to %v: want a positive span", span)
	}
	out := &Replay{Source: r.Source, Span: min(span, r.Span)}
	renum := map[int]int{}
	for _, c := range r.Channels {
		for _, m := range c.Messages {
			if m.Kind == KindKey && m.At < out.Span {
				renum[m.Key] = 0
			}
		}
	}
	old := make([]int, 0, len(renum))
	for k := range renum {
		old = append(old, k)
	}
	slices.Sort(old)
	for i, k := range old {
		renum[k] = i
	}
	out.Keys = len(old)
	for _, c := range r.Channels {
		nc := ReplayChannel{Name: c.Name}
		for _, m := range c.Messages {
			switch k, kept := renum[m.Key]; {
			case m.Kind == KindScheduled && m.At < out.Span:
			case m.Kind != KindScheduled && kept:
				m.Key = k
			default:
				continue
			}
			nc.Messages = append(nc.Messages, m)
		}
		if len(nc.Messages) > 0 {
			out.Channels = append(out.Channels, nc)
		}
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// ChannelMbit is the rate at which channel name's scheduled messages one
// way (toClient for the server's) were recorded, over the span, in Mbit/s.
// Echoes count toward the server's. A channel r does not have gives 0.
func (r *Replay) ChannelMbit(name string, toClient bool) float64 {
	var bytes int
	for _, c := range r.Channels {
		if c.Name != name {
			continue
		}
		for _, m := range c.Messages {
			if m.ToClient == toClient {
				bytes += frameSize(m.Size)
			}
		}
	}
	return float64(bytes) * 8 / r.Span.Seconds() / 1e6
}
