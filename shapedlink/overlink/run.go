package overlink

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
)

// Run builds the link c asks for, runs c's commands over it and returns
// the Record of what happened, filled as far as the run got also when err
// is not nil. err is Interrupted when a signal on c.Signals ended the run
// before the client command did, ctx's error (wrapped) when ctx did, and
// otherwise says why the link was not built, a command did not start or
// the server command did not listen. The client command's own exit status
// is not an error: it is Record.ExitCode.
func Run(ctx context.Context, c Config) (Record, error) {
	rec := Record{Profile: c.Profile.String(), ClientCommand: clientArgs(c.Client), Started: time.Now(), ExitCode: -1, Build: buildinfo.Read()}
	if c.Server != "" {
		// Through the shell, so quoting and variables such as
		// $QB_SERVER_ADDR work; exec, so that the signals Run sends reach
		// the server itself, not a shell waiting for it.
		rec.ServerCommand = []string{"sh", "-c", "exec " + c.Server}
	}
	err := c.check()
	if err == nil {
		err = run(ctx, c, &rec)
	}
	if err != nil {
		rec.Error = err.Error()
	}
	rec.Finished = time.Now()
	return rec, err
}

// check says what in c Run cannot use.
func (c Config) check() error {
	if c.ServerWait < 0 || c.Grace < 0 {
		return errors.New("overlink: Config.ServerWait and Config.Grace must not be negative")
	}
	return c.ServerPort.check()
}

// clientArgs is the client command, or the user's shell when none is given.
func clientArgs(args []string) []string {
	if len(args) > 0 {
		return args
	}
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	return []string{shell}
}
