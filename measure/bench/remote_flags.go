package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// DefaultIdleTimeout is how long a daemon waits without a session before
// it exits, unless -idle-timeout says otherwise.
const DefaultIdleTimeout = 30 * time.Minute

// twoHostFlags are the flags of two-host mode, registered on every matrix
// command.
type twoHostFlags struct {
	serve, remote, secretFile string
	idleTimeout               time.Duration
}

func (t *twoHostFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.serve, "serve", "", fmt.Sprintf("run the two-host daemon on this control address (e.g. 0.0.0.0:%d) instead of a matrix: "+
		"the server end of runs driven with -remote from another host; needs -secret-file (docs/two-hosts.md)", twohost.DefaultPort))
	fs.StringVar(&t.remote, "remote", "", "run the matrix against the two-host daemon at HOST:PORT over the path as found: "+
		"the server runs there, the client here, no link is emulated (so -profiles, -losses, -backend, -mode, -seed, -offload, -keep-awake and -departure-window do not apply); needs -secret-file")
	fs.StringVar(&t.secretFile, "secret-file", "", fmt.Sprintf("with -serve or -remote: the file holding the secret both hosts share (at least %d bytes, mode 600)", twohost.MinSecretLen))
	fs.DurationVar(&t.idleTimeout, "idle-timeout", DefaultIdleTimeout, "with -serve: exit after this long with no session (0: never)")
}

// refuseLinkFlags refuses, in a matrix with -remote, the flags and
// variables that describe an emulated link; explicit says whether one was
// given (Flags.Matrix's).
func (t *twoHostFlags) refuseLinkFlags(explicit func(flagName, env string) bool) error {
	var given []string
	for _, f := range []struct{ name, env string }{
		{"profiles", "PROFILES"}, {"losses", "LOSSES"}, {"backend", ""}, {"mode", ""}, {"seed", ""}, {"offload", ""},
		{"keep-awake", ""}, {"departure-window", ""},
	} {
		if explicit(f.name, f.env) {
			s := "-" + f.name
			if f.env != "" {
				s += " (or " + f.env + ")"
			}
			given = append(given, s)
		}
	}
	if len(given) > 0 {
		return fmt.Errorf("with -remote the path between the two hosts is used as found, so these do not apply: %s; leave them out",
			strings.Join(given, ", "))
	}
	return nil
}

// remoteFor is the matrix's Remote for the flags given: nil without
// -remote (where -secret-file and -idle-timeout are refused), else the
// daemon's address with the secret read from -secret-file.
func (t *twoHostFlags) remoteFor(fs *flag.FlagSet) (*twohost.Client, error) {
	if t.remote == "" {
		switch {
		case cli.Given(fs, "secret-file"):
			return nil, errors.New("-secret-file applies only with -serve or -remote")
		case cli.Given(fs, "idle-timeout"):
			return nil, errors.New("-idle-timeout applies only with -serve")
		}
		return nil, nil
	}
	if cli.Given(fs, "idle-timeout") {
		return nil, errors.New("-idle-timeout applies to the daemon (-serve), not to -remote")
	}
	secret, err := twohost.ReadSecretFile(t.secretFile)
	if err != nil {
		return nil, err
	}
	return &twohost.Client{Addr: t.remote, Secret: secret}, nil
}

// serveMain is Main with -serve: the two-host daemon until its idle
// timeout or SIGINT/SIGTERM.
func serveMain(name string, f *Flags) int {
	var other []string
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "serve", "secret-file", "idle-timeout":
		default:
			other = append(other, "-"+fl.Name)
		}
	})
	if len(other) > 0 {
		fmt.Fprintf(os.Stderr, "%s: with -serve only -secret-file and -idle-timeout apply, not %s: the matrix's flags go to the command with -remote on the other host\n",
			name, strings.Join(other, ", "))
		return ExitUsage
	}
	secret, err := twohost.ReadSecretFile(f.twoHost.secretFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := twohost.Listen(ctx, twohost.DaemonConfig{Env: benchRoles, Check: checkSpec, MaxWithin: MaxDuration + 10*time.Minute,
		Addr: f.twoHost.serve, Secret: secret, IdleTimeout: f.twoHost.idleTimeout,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)).With("daemon", name)})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	if err := d.Serve(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return ExitFailed
	}
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	return ExitOK
}

// checkSpec says why the two-host daemon will not run the server a driver
// asks for: an arm it does not know, a workload that does not validate, a
// session count out of range, or a congestion control its host lacks.
func checkSpec(raw json.RawMessage) error {
	var spec roleSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	if _, err := measure.Lookup(string(spec.Arm)); err != nil {
		return err
	}
	if err := spec.Workload.Validate(); err != nil {
		return err
	}
	if spec.Sessions < 0 || spec.Sessions > MaxSessions {
		return fmt.Errorf("sessions %d is outside 0..%d", spec.Sessions, MaxSessions)
	}
	if name := spec.Transport.CongestionControl; !spec.Arm.QUIC() && name != "" {
		if err := transport.CheckCongestionControl(name); err != nil {
			return fmt.Errorf("on the server's host: %w", err)
		}
	}
	return nil
}

// validateRemote checks a two-host matrix: the daemon's address and the
// secret, and nothing that only an emulated link can give.
func (m *Matrix) validateRemote() []error {
	errs := m.Remote.Validate()
	if len(m.Profiles) > 0 || len(m.Losses) > 0 {
		errs = append(errs, errors.New("with -remote the path is used as found: link profiles and loss levels do not apply"))
	}
	if m.Link.Backend != "" || m.Link.Mode != "" || m.Link.Seed != 0 || m.Link.Offload != shapedlink.OffloadWire ||
		m.Link.EmulatorKeepAwake || m.Link.EmulatorDepartureWindow != 0 {
		errs = append(errs, errors.New("with -remote no link is built: a backend, privilege mode, emulator seed, offload mode or emulator setting does not apply"))
	}
	return errs
}

// remoteAddr is the daemon's address for matrix.json, or "".
func (m *Matrix) remoteAddr() string {
	if m.Remote == nil {
		return ""
	}
	return m.Remote.Addr
}
