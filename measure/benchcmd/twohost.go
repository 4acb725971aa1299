package benchcmd

import (
	"context"
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
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/twohost"
)

// defaultIdleTimeout is how long a daemon waits without a session before
// it exits, unless -idle-timeout says otherwise.
const defaultIdleTimeout = 30 * time.Minute

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
	fs.DurationVar(&t.idleTimeout, "idle-timeout", defaultIdleTimeout, "with -serve: exit after this long with no session (0: never)")
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
func serveMain(name string, f *matrixFlags) int {
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
		return exitUsage
	}
	secret, err := twohost.ReadSecretFile(f.twoHost.secretFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := bench.ListenTwoHost(ctx, twohost.DaemonConfig{Addr: f.twoHost.serve, Secret: secret, IdleTimeout: f.twoHost.idleTimeout,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)).With("daemon", name)})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	if err := d.Serve(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return exitFailed
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitOK
}
