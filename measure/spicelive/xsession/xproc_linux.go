package xsession

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/internal/proc"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Program is a long-running program a role started (an X server, an
// xterm, spicy): in a process group of its own, so that stopping it stops
// whatever it started (an xterm's shell), and killed by the kernel if the
// role dies first.
type Program struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProgram starts name with args and env added to the role's own,
// its output to logf, and extra as descriptors 3, 4, ...
func StartProgram(name string, args, env []string, logf *os.File, extra ...*os.File) (*Program, error) {
	return launch(name, args, env, logf, extra, func(cmd *exec.Cmd) (func(), error) {
		// From the permanent starter thread, so Pdeathsig fires only
		// when the role process dies (see internal/proc).
		return func() {}, proc.Start(cmd)
	})
}

// launch prepares the command for startProgram and starts it with start,
// whose release is called once the program has been waited for.
func launch(name string, args, env []string, logf *os.File, extra []*os.File, start func(*exec.Cmd) (func(), error)) (*Program, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	release, err := start(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Program{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); release(); close(p.done) }()
	return p, nil
}

// stop ends the program's whole process group: SIGTERM, then SIGKILL
// after grace. It waits for the program itself.
func (p *Program) stop(grace time.Duration) {
	if p == nil {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Whatever the group leader left behind goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// Deaths watches the programs a session needs and the tunnel's end in a
// role: the first of them to end before the role is done kills the
// session, and says so.
type Deaths struct {
	start time.Time
	dead  chan struct{} // closed at the first death
	once  sync.Once
	why   error
}

// NewDeaths returns a watch on which nothing has died yet.
func NewDeaths() *Deaths { return &Deaths{start: time.Now(), dead: make(chan struct{})} }

// Dead is closed at the first death.
func (d *Deaths) Dead() <-chan struct{} { return d.dead }

// Watch makes p's exit a death. Read err before stopping p.
func (d *Deaths) Watch(p *Program) {
	go func() {
		<-p.done
		status := "status 0"
		if p.err != nil {
			status = p.err.Error()
		}
		d.Died(fmt.Errorf("%s exited %.1fs into the run (%s)", p.name, time.Since(d.start).Seconds(), status))
	}()
}

// Died records a death; only the first counts.
func (d *Deaths) Died(why error) {
	d.once.Do(func() { d.why = why; close(d.dead) })
}

// Err is the first death, or nil while everything lives.
func (d *Deaths) Err() error {
	select {
	case <-d.dead:
		return fmt.Errorf("the session died: %w", d.why)
	default:
		return nil
	}
}

// Or is the first death if there was one, else err: an error that a
// death caused is told by its cause.
func (d *Deaths) Or(err error) error {
	if derr := d.Err(); derr != nil && err != nil {
		return derr
	}
	return err
}

// StopAll stops programs in reverse order of starting (clients before
// their X server).
func StopAll(ps []*Program) {
	for i := len(ps) - 1; i >= 0; i-- {
		ps[i].stop(3 * time.Second)
	}
}

// StartXServer starts an X server that chooses its own free display and
// says which on -displayfd (Xorg and Xvfb both can), and returns it as
// ":N" once the server is ready for clients. The server has a /tmp of its
// own (proc.StartPrivateTmp; keep are directories under /tmp it is given
// paths in): its socket and lock files are nobody else's, and go with it
// however it ends. Its clients reach it through its abstract socket, which
// Xlib tries first and which belongs to the role's network namespace, so
// runs side by side may share a display number.
func StartXServer(ctx context.Context, name string, args, env []string, logf *os.File, keep ...string) (*Program, string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	p, err := launch(name, append(args, "-displayfd", "3"), env, logf, []*os.File{w}, func(cmd *exec.Cmd) (func(), error) {
		return proc.StartPrivateTmp(cmd, keep...)
	})
	w.Close()
	if err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case s := <-line:
		if _, err := strconv.Atoi(s); err == nil {
			return p, ":" + s, nil
		}
		p.stop(time.Second)
		return nil, "", fmt.Errorf("%s did not start (it said %q on -displayfd; see its log)", name, s)
	case <-p.done:
		return nil, "", fmt.Errorf("%s exited before it was ready (%v; see its log)", name, p.err)
	case <-t.C:
		p.stop(time.Second)
		return nil, "", fmt.Errorf("%s was not ready within 30s (see its log)", name)
	case <-ctx.Done():
		p.stop(time.Second)
		return nil, "", ctx.Err()
	}
}

// XTool runs a short X client (xdotool, import) on display and returns
// its output.
func XTool(ctx context.Context, display string, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %v", timeout)
		}
		return out.String(), fmt.Errorf("%s %s: %w (%s)", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// WindowRect finds the window titled title on display (waiting for it to
// appear) and returns its window id and rectangle on the screen.
func WindowRect(ctx context.Context, display, title string) (string, spicetrace.Rect, error) {
	// --onlyvisible: a window that exists but is not mapped yet cannot
	// take the focus (X answers BadMatch).
	out, err := XTool(ctx, display, 20*time.Second, "xdotool", "search", "--sync", "--onlyvisible", "--name", "^"+title+"$",
		"getwindowgeometry", "--shell", "%1")
	if err != nil {
		return "", spicetrace.Rect{}, err
	}
	return parseGeometry(out)
}

// Focus gives window win the keyboard focus on display. Without a window
// manager the focus stays where it is put. A window that has only just
// been mapped can still refuse it for a moment, so it is tried for a few
// seconds.
func Focus(ctx context.Context, display, win string) error {
	var err error
	for range 20 {
		if _, err = XTool(ctx, display, 5*time.Second, "xdotool", "windowfocus", "--sync", win); err == nil {
			return nil
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

// parseGeometry reads xdotool's getwindowgeometry --shell output.
func parseGeometry(out string) (string, spicetrace.Rect, error) {
	v := map[string]int{}
	var win string
	for _, line := range strings.Split(out, "\n") {
		k, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		if k == "WINDOW" {
			win = val
		}
		if n, err := strconv.Atoi(val); err == nil {
			v[k] = n
		}
	}
	for _, k := range []string{"X", "Y", "WIDTH", "HEIGHT"} {
		if _, ok := v[k]; !ok {
			return "", spicetrace.Rect{}, fmt.Errorf("xdotool's geometry lacks %s: %q", k, out)
		}
	}
	if win == "" || v["WIDTH"] <= 0 || v["HEIGHT"] <= 0 {
		return "", spicetrace.Rect{}, fmt.Errorf("xdotool's geometry names no window of positive size: %q", out)
	}
	r := spicetrace.Rect{Top: int32(v["Y"]), Left: int32(v["X"]), Bottom: int32(v["Y"] + v["HEIGHT"]), Right: int32(v["X"] + v["WIDTH"])}
	return win, r, nil
}

// Programs a live session needs, by the package that has them on Debian.
var needed = map[string]string{
	"Xorg":    "xserver-xorg-core (with xserver-xspice)",
	"xterm":   "xterm",
	"Xvfb":    "xvfb",
	"spicy":   "spice-client-gtk",
	"xdotool": "xdotool",
}

// spiceqxlDriver is Xspice's X driver, which Xorg loads.
const spiceqxlDriver = "/usr/lib/xorg/modules/drivers/spiceqxl_drv.so"

// MissingPrograms says which programs a live session needs are absent,
// with the package to install, or "" when none is.
func MissingPrograms() string {
	var miss []string
	for _, name := range []string{"Xorg", "xterm", "Xvfb", "spicy", "xdotool"} {
		if _, err := exec.LookPath(name); err != nil {
			miss = append(miss, name+" ("+needed[name]+")")
		}
	}
	if _, err := os.Stat(spiceqxlDriver); errors.Is(err, os.ErrNotExist) {
		miss = append(miss, spiceqxlDriver+" (xserver-xspice)")
	}
	if len(miss) == 0 {
		return ""
	}
	return "missing " + strings.Join(miss, ", ") + ": apt-get install xserver-xspice spice-client-gtk xvfb xdotool xterm"
}
