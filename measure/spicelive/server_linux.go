package spicelive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// xspiceConf is the Xorg configuration of Xspice's driver. Debian 12's own
// /etc/X11/spiceqxl.xorg.conf does not start: without the buffer sizes
// below the driver sizes its primary surface as 0 and Xorg aborts on a
// corrupted heap; with them but without QXL_NUM_HEADS in the environment
// it finds no output and Xorg crashes in xf86InitViewport. The sizes are
// the driver's documented defaults; the screen is 1024x768.
const xspiceConf = `Section "Device"
    Identifier "XSPICE"
    Driver "spiceqxl"
    Option "SurfaceBufferSize" "128"
    Option "CommandBufferSize" "128"
    Option "FrameBufferSize" "16"
EndSection
Section "InputDevice"
    Identifier "XSPICE POINTER"
    Driver     "xspice pointer"
EndSection
Section "InputDevice"
    Identifier "XSPICE KEYBOARD"
    Driver     "xspice keyboard"
EndSection
Section "Monitor"
    Identifier "Configured Monitor"
EndSection
Section "Screen"
    Identifier   "XSPICE Screen"
    Monitor      "Configured Monitor"
    Device       "XSPICE"
    DefaultDepth 24
    SubSection "Display"
        Modes "1024x768"
    EndSubSection
EndSection
Section "ServerLayout"
    Identifier "XSPICE"
    Screen "XSPICE Screen"
    InputDevice "XSPICE KEYBOARD"
    InputDevice "XSPICE POINTER"
EndSection
Section "ServerFlags"
    Option "AutoAddDevices" "False"
EndSection
`

// The two xterms on Xspice's screen: one typed into, one redrawn all the
// time. Their titles find them; their geometry is read back, not assumed.
const (
	typingTitle    = "qb-typing"
	busyTitle      = "qb-busy"
	typingGeometry = "80x24+0+0"
	busyGeometry   = "80x10+0+400"
)

// spicePort is where Xspice listens, on the server namespace's address.
const spicePort = 5900

// serverSpec is the server role's job: Xspice with the two xterms, and
// the tunnel's server end.
type serverSpec struct {
	Arm       measure.Arm `json:"arm"`
	SpiceAddr string      `json:"spice_addr"`
	Password  string      `json:"password"`
	Dir       string      `json:"dir"`
	// BusyInterval is the pause between the busy xterm's lines.
	BusyInterval time.Duration `json:"busy_interval_ns"`
	// Display is the display workload, or nil for none.
	Display *xsession.DisplaySpec `json:"display,omitempty"`
	// Options are Config.ServerOptions.
	Options []string `json:"options,omitempty"`
	// SpiceRcvBuf is Config.SpiceRcvBuf.
	SpiceRcvBuf int `json:"spice_rcvbuf,omitempty"`
}

// runServer starts Xspice and its xterms, then carries the tunnel's
// channels to it until told to stop. Should Xspice or an xterm exit
// before that, the session is dead: it stops at once and fails, saying
// which.
func runServer(ctx context.Context, base rig.RoleBase, spec serverSpec, log *slog.Logger) (ServerResult, error) {
	var res ServerResult
	dead := xsession.NewDeaths()
	logf, err := os.Create(filepath.Join(spec.Dir, "x-server.log"))
	if err != nil {
		return res, err
	}
	defer logf.Close()
	var progs []*xsession.Program
	defer func() { xsession.StopAll(progs) }()
	conf := filepath.Join(spec.Dir, "xspice.conf")
	if err := os.WriteFile(conf, []byte(xspiceConf), 0o644); err != nil {
		return res, err
	}
	host, port, err := net.SplitHostPort(spec.SpiceAddr)
	if err != nil {
		return res, fmt.Errorf("spice address %q: %w", spec.SpiceAddr, err)
	}
	env := []string{"XSPICE_ADDR=" + host, "XSPICE_PORT=" + port, "XSPICE_PASSWORD=" + spec.Password, "QXL_NUM_HEADS=1"}
	env = append(env, xsession.ServerEnv(spec.Options)...)
	xargs := []string{"-config", conf, "-noreset", "-nolisten", "tcp", "-logfile", filepath.Join(spec.Dir, "xorg.log")}
	typingCmd := "exec cat >/dev/null"
	if spec.Display != nil {
		// Keys are told apart by their glyphs (keydraw.AnalyseGlyphs): no cursor
		// draws beside them, and no key repeated by an X server that a
		// full display channel holds up between a key's press and release.
		xargs = append(xargs, "-ardelay", "60000")
		typingCmd = `printf '\033[?25l'; ` + typingCmd
	}
	xorg, display, err := xsession.StartXServer(ctx, "Xorg", xargs, env, logf, spec.Dir)
	if err != nil {
		return res, fmt.Errorf("starting Xspice: %w", err)
	}
	progs = append(progs, xorg)
	dead.Watch(xorg)
	res.Display = display
	log.Info("Xspice is up", "display", display, "spice", spec.SpiceAddr)
	denv := []string{"DISPLAY=" + display}
	busyLoop := fmt.Sprintf(`n=0; while :; do n=$((n+1)); echo "busy line $n at $(date +%%T.%%N)"; sleep %s; done`,
		strconv.FormatFloat(spec.BusyInterval.Seconds(), 'f', -1, 64))
	for _, x := range [][]string{
		{"-T", typingTitle, "-geometry", typingGeometry, "-e", "sh", "-c", typingCmd},
		{"-T", busyTitle, "-geometry", busyGeometry, "-e", "sh", "-c", busyLoop},
	} {
		p, err := xsession.StartProgram("xterm", x, denv, logf)
		if err != nil {
			return res, err
		}
		progs = append(progs, p)
		dead.Watch(p)
	}
	win, typing, err := xsession.WindowRect(ctx, display, typingTitle)
	if err != nil {
		return res, dead.Or(fmt.Errorf("the typing xterm: %w", err))
	}
	if _, res.Busy, err = xsession.WindowRect(ctx, display, busyTitle); err != nil {
		return res, dead.Or(fmt.Errorf("the busy xterm: %w", err))
	}
	res.Typing = typing
	if typing.Intersects(res.Busy) {
		return res, fmt.Errorf("the typing xterm %+v and the busy one %+v overlap: their draws could not be told apart", typing, res.Busy)
	}
	if err := results.WriteJSON(filepath.Join(spec.Dir, xsession.AreasFile), xsession.Areas{Typing: typing, Busy: res.Busy}); err != nil {
		return res, err
	}
	if spec.Display != nil {
		p, rect, err := xsession.StartDisplay(ctx, display, *spec.Display, logf, typing, res.Busy)
		if p != nil {
			progs = append(progs, p)
			dead.Watch(p)
		}
		if err != nil {
			return res, dead.Or(fmt.Errorf("the %s workload: %w", spec.Display.Workload, err))
		}
		res.Workload = &rect
		if err := picture.WriteLayout(spec.Dir, res.Typing, res.Workload); err != nil {
			return res, err
		}
	}
	// No window manager: focus stays where it is put.
	if err := xsession.Focus(ctx, display, win); err != nil {
		return res, dead.Or(err)
	}
	return serveTunnel(ctx, base, spec, res, dead, log)
}

// serveTunnel runs the tunnel's server end until ctx ends, or until the
// session dies: then it fails with the death.
func serveTunnel(ctx context.Context, base rig.RoleBase, spec serverSpec, res ServerResult, dead *xsession.Deaths, log *slog.Logger) (ServerResult, error) {
	ln, err := measure.ListenCarrier(ctx, transport.Arm(spec.Arm), base.Addr, base.Transport)
	if err != nil {
		return res, fmt.Errorf("listening for carriers on %s: %w", base.Addr, err)
	}
	defer ln.Close()
	f, err := os.Create(filepath.Join(spec.Dir, ServerTrace))
	if err != nil {
		return res, err
	}
	defer f.Close()
	tracer, err := spicetunnel.NewTracer(f, spicetrace.SideServer, "arm "+string(spec.Arm))
	if err != nil {
		return res, err
	}
	end := &spicetunnel.ServerEnd{Listener: ln, Trace: tracer, Log: log, Dial: func(ctx context.Context) (net.Conn, error) {
		return spiceDialer(spec.SpiceRcvBuf).DialContext(ctx, "tcp", spec.SpiceAddr)
	}}
	if res.Workload != nil {
		pic := picture.WatchServer(res.Display, res.Workload, tracer.Start())
		defer pic.Finish(filepath.Join(spec.Dir, picture.ServerPictureFile), log)
	}
	rig.SignalReady(ln.Addr())
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-dead.Dead():
			stop()
		case <-sctx.Done():
		}
	}()
	err = end.Serve(sctx)
	if ctx.Err() == nil {
		// Only the run's end, or a death, may end the tunnel.
		if err == nil {
			err = errors.New("the tunnel's server end stopped serving before the run ended")
		}
		dead.Died(err)
	}
	if derr := dead.Err(); derr != nil {
		err = derr
	}
	st := measure.StateAtEnd(ln)
	res.State, res.Channels = &st, end.Channels()
	if ferr := tracer.Flush(); err == nil {
		err = ferr
	}
	return res, err
}

// spiceDialer connects to spice-server with a receive buffer of rcvbuf
// bytes (SO_RCVBUF, set before connecting so the window scale fits it),
// or the kernel's own when rcvbuf is 0.
func spiceDialer(rcvbuf int) *net.Dialer {
	d := &net.Dialer{}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf) }); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("setting SO_RCVBUF %d on the connection to spice-server: %w", rcvbuf, serr)
			}
			return nil
		}
	}
	return d
}
