package spicelive

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/internal/hostcpu"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// Files in a live run's directory, beside its run.json.
const (
	// ClientTrace and ServerTrace are the tunnel ends' traces of every
	// message (spicetrace's JSON lines).
	ClientTrace = "client-trace.jsonl"
	ServerTrace = "server-trace.jsonl"
	// screenshotFile is spicy's window at the end of the typing.
	screenshotFile = "screenshot.png"
	// LiveFile holds the run's LiveRecord.
	LiveFile = "live.json"
)

// LiveRecord is what a live run adds to its run.json, in LiveFile.
type LiveRecord struct {
	// Analysis is the key-to-draw figure read from the client trace.
	Analysis keydraw.Analysis `json:"analysis"`
	// Display is what the display channel carried in the measured part,
	// for a run with a display workload.
	Display *DisplayLoad `json:"display,omitempty"`
	// Server and Client are what the two roles reported.
	Server *ServerResult `json:"server,omitempty"`
	Client *ClientResult `json:"client,omitempty"`
	// Pixel is the key-to-pixel figure, when Config.Pixel asked for it.
	Pixel *keydraw.PixelAnalysis `json:"pixel,omitempty"`
	// Position is the run's place in its repeat's order of arms, from 1.
	Position int `json:"position,omitempty"`
	// HostCPU is how the host's CPUs were spent from the server role's
	// start to both roles' end.
	HostCPU *hostcpu.Use `json:"host_cpu,omitempty"`
	// Picture is the display workload's frames at the client against
	// those drawn, for a run with a display workload.
	Picture *picture.PictureRecord `json:"picture,omitempty"`
}

// ServerResult is what the server role reports.
type ServerResult struct {
	// Display is Xspice's X display, such as ":1".
	Display string `json:"display,omitempty"`
	// Typing and Busy are the two xterms' rectangles on Xspice's screen,
	// as read back from it.
	Typing spicetrace.Rect `json:"typing"`
	Busy   spicetrace.Rect `json:"busy"`
	// Workload is the display workload's window, when there is one.
	Workload *spicetrace.Rect `json:"workload,omitempty"`
	// Channels is what the tunnel's server end carried, per channel, and
	// State its carrier listener's transport state.
	Channels []spicetunnel.ChannelStats `json:"channels,omitempty"`
	State    *transport.State           `json:"state,omitempty"`
}

// ClientResult is what the client role reports.
type ClientResult struct {
	// TypingStart and TypingEnd are the typing period in the client
	// trace's time; Keys counts the keys xdotool sent.
	TypingStart time.Duration `json:"typing_start_ns"`
	TypingEnd   time.Duration `json:"typing_end_ns"`
	Keys        int           `json:"keys"`
	// AnswersEnd, with a display workload, is when the wait for the last
	// keys' answers after the typing ended: each key answered, or the
	// last one's timeout over. Zero in runs that stopped with the typing.
	AnswersEnd time.Duration `json:"answers_end_ns,omitempty"`
	// SessionUp is how long spicy took from its start to the first draw
	// with the inputs channel linked.
	SessionUp time.Duration `json:"session_up_ns"`
	// Screenshot is the screenshot's file name in the run's directory, or
	// empty when none was taken.
	Screenshot string `json:"screenshot,omitempty"`
	// Channels is what the tunnel's client end carried, per channel, and
	// State its carrier's transport state.
	Channels []spicetunnel.ChannelStats `json:"channels,omitempty"`
	State    *transport.State           `json:"state,omitempty"`
}

// ErrRunsFailed says some runs failed and were recorded so: the next Run
// with the same Config redoes them.
var ErrRunsFailed = errors.New("runs failed")

// SettingsFile records in the work directory what it was made for: the
// Config's JSON form.
const SettingsFile = "spicelive.json"

// fillRun puts a live run's figures into its run.json: the key-to-draw
// samples as the round trips, with the censored keys at the timeout, the
// unanswered keys as timeouts, and the
// display channel's goodput over the measured part of the typing.
func fillRun(run *results.Run, c Config, rec *LiveRecord, tr *spicetrace.Trace) {
	a := rec.Analysis
	run.Samples = append(slices.Clone(a.Samples), a.Censored...)
	slices.SortStableFunc(run.Samples, func(x, y stats.Sample) int { return cmp.Compare(x.Offset, y.Offset) })
	run.Timeouts = a.Unanswered
	from := rec.Client.TypingStart + c.Warmup
	to := rec.Client.TypingEnd
	var window, total int64
	for _, r := range tr.Records {
		if r.ChannelType != "display" || r.Dir != spicetrace.ServerToClient {
			continue
		}
		if r.T >= rec.Client.TypingStart && r.T < to {
			total += int64(r.Size)
			if r.T >= from {
				window += int64(r.Size)
			}
		}
	}
	run.BulkBytes, run.BulkBytesTotal = window, total
	if to > from {
		run.ThroughputMbit = float64(window) * 8 / (to - from).Seconds() / 1e6
	}
	for _, ch := range rec.Client.Channels {
		if ch.Error != "" {
			run.ChannelErrors = append(run.ChannelErrors, fmt.Sprintf("client end, channel %d (%s): %s", ch.Channel, ch.ChannelType, ch.Error))
		}
		if ch.ParseError != "" {
			run.ChannelErrors = append(run.ChannelErrors, fmt.Sprintf("client end, channel %d not followed: %s", ch.Channel, ch.ParseError))
		}
	}
}

// AnalyseRun is the key-to-draw analysis of a live run of c: by glyph
// with a display workload, else each key's first draw before the next.
func AnalyseRun(c Config, tr *spicetrace.Trace, s *ServerResult, cl *ClientResult) keydraw.Analysis {
	if c.Display != xsession.DisplayNone {
		return keydraw.AnalyseGlyphs(tr, s.Typing, s.Busy, cl.TypingStart, cl.TypingEnd, cl.AnswersEnd, c.KeyTimeout)
	}
	return keydraw.Analyse(tr, s.Typing, s.Busy, cl.TypingStart)
}

// analysePixels reads the client role's keydraw.PixelCapture in dir and puts the
// key-to-pixel figure of a live run of c into rec.Pixel
// (keydraw.AnalyseCapture).
func (rec *LiveRecord) analysePixels(c Config, dir string, tr *spicetrace.Trace) error {
	var pc keydraw.PixelCapture
	if err := results.ReadJSON(filepath.Join(dir, keydraw.PixelCaptureFile), &pc); err != nil {
		return fmt.Errorf("key-to-pixel was asked for, and the client role's capture cannot be read: %w", err)
	}
	if len(pc.Keys) != rec.Client.Keys {
		return fmt.Errorf("the pixel capture has %d keys, and the client role typed %d", len(pc.Keys), rec.Client.Keys)
	}
	p, err := keydraw.AnalyseCapture(pc, tr, rec.Analysis, rec.Server.Typing, c.Display != xsession.DisplayNone,
		rec.Client.TypingStart, rec.Client.TypingEnd, rec.Client.AnswersEnd, c.KeyTimeout, c.Warmup)
	if err != nil {
		return err
	}
	rec.Pixel = &p
	return nil
}

// analysePicture reads the two roles' frame captures in dir and puts the
// picture of the measured part into rec.Picture.
func (rec *LiveRecord) analysePicture(c Config, dir string, tr *spicetrace.Trace) error {
	if rec.Server == nil || rec.Server.Workload == nil || rec.Client == nil {
		return errors.New("the run's record has no display workload's window")
	}
	var cl, sv picture.FrameCapture
	if err := results.ReadJSON(filepath.Join(dir, picture.ClientPictureFile), &cl); err != nil {
		return fmt.Errorf("the client's frame capture: %w", err)
	}
	if err := results.ReadJSON(filepath.Join(dir, picture.ServerPictureFile), &sv); err != nil {
		return fmt.Errorf("the server's frame capture: %w", err)
	}
	p, err := picture.Analyse(cl, sv, tr, *rec.Server.Workload, rec.Client.TypingStart+c.Warmup, rec.Client.TypingEnd)
	if err != nil {
		return err
	}
	switch {
	case c.Display == xsession.DisplayVideo:
		p.NominalFPS = float64(c.FrameRate)
	case c.Display == xsession.DisplayImages && c.ImageInterval > 0:
		p.NominalFPS = float64(time.Second) / float64(c.ImageInterval)
	}
	p.Good = picture.GoodPicture(p.ClientFPS, p.NominalFPS)
	rec.Picture = &p
	return nil
}

// ReadTrace reads the trace file at path, such as a live run's ClientTrace.
func ReadTrace(path string) (*spicetrace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return spicetrace.Read(f)
}
