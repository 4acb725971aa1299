package xsession

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// AreasFile is where the server role writes the xterms' rectangles, in
// the run's directory, for the client role's wait for answers.
const AreasFile = "areas.json"

// Areas are the typing and busy xterms' rectangles on the guest's screen.
type Areas struct {
	Typing spicetrace.Rect `json:"typing"`
	Busy   spicetrace.Rect `json:"busy"`
}

// AnswerWatch keeps, from the client end's events, the key presses and
// the screen's draws: enough to tell, as the typing ends, which keys
// still wait for their draws.
type AnswerWatch struct {
	start time.Time
	mu    sync.Mutex
	recs  []spicetrace.Record
}

// NewAnswerWatch returns a watch whose records are timed from start.
func NewAnswerWatch(start time.Time) *AnswerWatch { return &AnswerWatch{start: start} }

// Event keeps e when it is a key press or a draw on the screen.
func (w *AnswerWatch) Event(e spicetunnel.Event) {
	key := e.Msg.Key != nil && e.Msg.Key.Down
	draw := e.Msg.Draw != nil && e.Msg.Draw.Primary
	if !key && !draw {
		return
	}
	r := spicetunnel.Record(w.start, e.Channel, e.Type, e.ID, e.Known, e.Msg, e.At)
	w.mu.Lock()
	w.recs = append(w.recs, r)
	w.mu.Unlock()
}

// pending counts the keys pressed from typingStart that no draw over their
// glyph has answered yet, as AnalyseGlyphs reads them.
func (w *AnswerWatch) pending(a Areas, typingStart, timeout time.Duration) int {
	w.mu.Lock()
	tr := &spicetrace.Trace{Records: append([]spicetrace.Record(nil), w.recs...)}
	w.mu.Unlock()
	never := time.Duration(1<<62 - 1)
	return keydraw.AnalyseGlyphs(tr, a.Typing, a.Busy, typingStart, never, 0, timeout).Unanswered
}

// WaitAnswers waits, after the typing, until every key typed has been
// answered or the last one's timeout is over, checking every poll. It
// returns early, with nil, when the areas cannot be read (the keys then
// wait no longer than the typing did), and with the first death in dead.
func WaitAnswers(ctx context.Context, w *AnswerWatch, dir string, typingStart, typingEnd, timeout, poll time.Duration, dead *Deaths) error {
	var a Areas
	if err := results.ReadJSON(filepath.Join(dir, AreasFile), &a); err != nil {
		return nil
	}
	end := w.start.Add(typingEnd + timeout)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for time.Now().Before(end) && w.pending(a, typingStart, timeout) > 0 {
		select {
		case <-tick.C:
		case <-dead.Dead():
			return dead.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return dead.Err()
}
