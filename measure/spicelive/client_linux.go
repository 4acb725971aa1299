package spicelive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// clientListen is where the tunnel's client end waits for spicy, inside
// the client namespace.
const clientListen = "127.0.0.1:5900"

// clientSpec is the client role's job: the tunnel's client end, spicy
// under Xvfb connected to it, and the keystrokes.
type clientSpec struct {
	Arm      measure.Arm `json:"arm"`
	Password string      `json:"password"`
	Dir      string      `json:"dir"`
	// Duration is how long keys are typed, one every KeyInterval, once the
	// session has been up for Settle. SessionTimeout bounds the wait for
	// the session to come up.
	Duration       time.Duration `json:"duration_ns"`
	KeyInterval    time.Duration `json:"key_interval_ns"`
	Settle         time.Duration `json:"settle_ns"`
	SessionTimeout time.Duration `json:"session_timeout_ns"`
	// Pixel, when set, types the keys through a pixelWatch, which also
	// times the typing xterm's pixel changes in spicy's window.
	Pixel bool `json:"pixel,omitempty"`
	// KeyTimeout, when set (a display workload), makes the client wait
	// after the typing for the keys' answers, up to this after the last.
	KeyTimeout time.Duration `json:"key_timeout_ns,omitempty"`
	// Picture, when set, counts the display workload's frames in spicy's
	// window while the keys are typed (picture.ClientPictureFile).
	Picture bool `json:"picture,omitempty"`
}

// answerPoll is how often the wait for the keys' answers checks them.
const answerPoll = 250 * time.Millisecond

// readiness watches the tunnel for a session that is up: the inputs
// channel past its link stage, and a draw on the screen.
type readiness struct {
	inputs, drawn atomic.Bool
	up            chan struct{}
	once          atomic.Bool
}

func (r *readiness) event(e spicetunnel.Event) {
	if e.Known && e.Type == spiceproto.ChannelInputs && e.Msg.Stage == spicetrace.StageData {
		r.inputs.Store(true)
	}
	if e.Msg.Draw != nil && e.Msg.Draw.Primary {
		r.drawn.Store(true)
	}
	if r.inputs.Load() && r.drawn.Load() && r.once.CompareAndSwap(false, true) {
		close(r.up)
	}
}

// runClient carries spicy's channels, waits for the session, types, and
// takes a screenshot. Should Xvfb, spicy or the tunnel's client end stop
// before that is done, the session is dead: it stops at once and fails,
// saying which.
func runClient(ctx context.Context, base rig.RoleBase, spec clientSpec, log *slog.Logger) (ClientResult, error) {
	var res ClientResult
	dead := xsession.NewDeaths()
	carrier, err := measure.DialCarrier(ctx, transport.Arm(spec.Arm), base.Addr, base.Transport)
	if err != nil {
		return res, fmt.Errorf("the tunnel's carrier to %s: %w", base.Addr, err)
	}
	defer carrier.Close()
	ln, err := net.Listen("tcp", clientListen)
	if err != nil {
		return res, err
	}
	f, err := os.Create(filepath.Join(spec.Dir, ClientTrace))
	if err != nil {
		return res, err
	}
	defer f.Close()
	tracer, err := spicetunnel.NewTracer(f, spicetrace.SideClient, "arm "+string(spec.Arm))
	if err != nil {
		return res, err
	}
	ready := &readiness{up: make(chan struct{})}
	answers := xsession.NewAnswerWatch(tracer.Start())
	events := ready.event
	if spec.KeyTimeout > 0 {
		events = func(e spicetunnel.Event) { ready.event(e); answers.Event(e) }
	}
	end := &spicetunnel.ClientEnd{Listener: ln, Carrier: carrier, Trace: tracer, Log: log, Events: events}
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		err := end.Serve(sctx)
		if sctx.Err() == nil {
			if err == nil {
				err = errors.New("it stopped accepting spicy's connections")
			}
			dead.Died(fmt.Errorf("the tunnel's client end stopped before the run ended: %w", err))
		}
		served <- err
	}()

	err = session(ctx, spec, tracer.Start(), ready, answers, dead, &res, log)
	stopServe()
	if serr := <-served; err == nil {
		err = serr
	}
	st := measure.StateAtEnd(carrier)
	res.State, res.Channels = &st, end.Channels()
	if ferr := tracer.Flush(); err == nil {
		err = ferr
	}
	return res, err
}

// session runs Xvfb and spicy, and types once the session is up; the
// first death in dead ends it with that death.
func session(ctx context.Context, spec clientSpec, traceStart time.Time, ready *readiness, answers *xsession.AnswerWatch, dead *xsession.Deaths, res *ClientResult, log *slog.Logger) error {
	logf, err := os.Create(filepath.Join(spec.Dir, "x-client.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	var progs []*xsession.Program
	defer func() { xsession.StopAll(progs) }()
	xvfb, display, err := xsession.StartXServer(ctx, "Xvfb", []string{"-screen", "0", "1280x1024x24", "-nolisten", "tcp"}, nil, logf)
	if err != nil {
		return fmt.Errorf("starting the client's X server (Xvfb): %w", err)
	}
	progs = append(progs, xvfb)
	dead.Watch(xvfb)
	host, port, _ := net.SplitHostPort(clientListen)
	started := time.Now()
	spicy, err := xsession.StartProgram("spicy", []string{"-h", host, "-p", port, "-w", spec.Password}, []string{"DISPLAY=" + display}, logf)
	if err != nil {
		return err
	}
	progs = append(progs, spicy)
	dead.Watch(spicy)
	select {
	case <-ready.up:
		res.SessionUp = time.Since(started)
		log.Info("the session is up", "after", res.SessionUp)
	case <-dead.Dead():
		return fmt.Errorf("before it was up, %w (see x-client.log)", dead.Err())
	case <-time.After(spec.SessionTimeout):
		return fmt.Errorf("the session was not up within %v (inputs linked: %v, a draw seen: %v; see x-client.log and the traces)",
			spec.SessionTimeout, ready.inputs.Load(), ready.drawn.Load())
	case <-ctx.Done():
		return ctx.Err()
	}
	win, winRect, err := xsession.WindowRect(ctx, display, "spice display.*")
	if err != nil {
		return dead.Or(fmt.Errorf("spicy's window: %w", err))
	}
	if err := xsession.Focus(ctx, display, win); err != nil {
		return dead.Or(err)
	}
	select {
	case <-time.After(spec.Settle):
	case <-dead.Dead():
		return dead.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
	press := func(k string) error {
		_, err := xsession.XTool(ctx, display, 5*time.Second, "xdotool", "key", k)
		return err
	}
	var watch *keydraw.PixelWatch
	if spec.Pixel {
		if watch, err = keydraw.StartPixelWatch(display, win, winRect, traceStart); err != nil {
			return dead.Or(fmt.Errorf("the pixel watch on spicy's window: %w", err))
		}
		defer watch.Close()
		press = watch.Press
	}
	var pic *picture.Watch
	if spec.Picture {
		pic = picture.WatchClient(display, win, spec.Dir, traceStart)
	}
	err = typeKeys(ctx, spec, press, dead, traceStart, res)
	if pic != nil {
		pic.Finish(filepath.Join(spec.Dir, picture.ClientPictureFile), log)
	}
	if err != nil {
		return err
	}
	if spec.KeyTimeout > 0 {
		if err := xsession.WaitAnswers(ctx, answers, spec.Dir, res.TypingStart, res.TypingEnd, spec.KeyTimeout, answerPoll, dead); err != nil {
			return err
		}
		if spec.Pixel {
			time.Sleep(answerPoll) // the last draws' pixels
		}
		res.AnswersEnd = time.Since(traceStart)
		log.Info("the keys' answers are in", "after_typing", res.AnswersEnd-res.TypingEnd)
	}
	res.Screenshot = takeScreenshot(ctx, display, win, spec.Dir, log)
	if watch != nil {
		if err := watch.Finish(spec.Dir); err != nil {
			return dead.Or(fmt.Errorf("the pixel watch on spicy's window: %w", err))
		}
	}
	// A death during the screenshot still leaves the last keys unanswered.
	return dead.Err()
}

// typeKeys presses a key every KeyInterval for Duration: the letters in
// turn, and Return after every 40th so the lines stay short. It stops at
// the session's first death, with that death.
func typeKeys(ctx context.Context, spec clientSpec, press func(key string) error, dead *xsession.Deaths, traceStart time.Time, res *ClientResult) error {
	tick := time.NewTicker(spec.KeyInterval)
	defer tick.Stop()
	start := time.Now()
	res.TypingStart = start.Sub(traceStart)
	for n := 0; time.Since(start) < spec.Duration; n++ {
		k := string(rune('a' + n%26))
		if n%41 == 40 {
			k = "Return"
		}
		if err := dead.Err(); err != nil {
			return fmt.Errorf("after %d keys, %w (see x-client.log)", res.Keys, err)
		}
		if err := press(k); err != nil {
			return dead.Or(err)
		}
		res.Keys++
		select {
		case <-tick.C:
		case <-dead.Dead():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	res.TypingEnd = time.Since(traceStart)
	return dead.Err()
}

// takeScreenshot saves spicy's window win as a PNG with ImageMagick's
// import, and returns its file name, or "" (with a warning) when it could
// not.
func takeScreenshot(ctx context.Context, display, win, dir string, log *slog.Logger) string {
	if _, err := exec.LookPath("import"); err != nil {
		log.Warn("no screenshot: ImageMagick's import is not installed (apt-get install imagemagick)")
		return ""
	}
	path := filepath.Join(dir, screenshotFile)
	if _, err := xsession.XTool(ctx, display, 20*time.Second, "import", "-window", win, path); err != nil {
		log.Warn("no screenshot", "err", err)
		return ""
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return ""
	}
	return screenshotFile
}
