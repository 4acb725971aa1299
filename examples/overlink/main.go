package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/shapedlink/overlink"
)

// config is what the command line asks for.
type config struct {
	run    overlink.Config // the run, without its input, output and signals
	record string          // "" for none
}

// linkFlags registers the link flags the command has (package
// linkflag's): -profile, -backend, -seed and -offload, whose default here
// is keep, so that programs over the link see a host's offloads.
func linkFlags(fs *flag.FlagSet) *linkflag.Flags {
	return linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profile | linkflag.Backend | linkflag.Seed | linkflag.Offload | linkflag.Emulator,
		Profiles: "80:10", Offload: shapedlink.OffloadKeep})
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("overlink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	link := linkFlags(fs)
	server := fs.String("server", "", "command to run in the server namespace first (through sh -c as \"exec command\", so one command with the shell's quoting and $variables), e.g. \"iperf3 -s -1 -B $QB_SERVER_ADDR\"")
	record := fs.String("record", "", "write a JSON record (the link as applied, its counters, the client's exit status) to this file on exit; none by default (a short summary goes to stderr instead)")
	queue := fs.Bool("queue", false, "sample the server end's egress queue every millisecond into the record (needs -record)")
	serverWait := fs.Duration("server-wait", 10*time.Second, "how long the server command has to start listening (see -server-port) before overlink gives up with status 1; with -server-port none, how long the client command waits for it regardless")
	serverPort := fs.String("server-port", "any", "what the server command listens on before the client command starts: tcp:PORT, udp:PORT, PORT (either), any (any TCP listener or unconnected UDP socket new in the server namespace), or none (it opens no socket: the client starts after -server-wait)")
	grace := fs.Duration("grace", 2*time.Second, "how long the server command has to exit after SIGTERM before it is killed (a signal to overlink meanwhile kills it at once)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: overlink [flags] [--] [command [args...]]\n\n"+
			"Runs command (default: an interactive shell) in the client namespace of a shaped link,\n"+
			"and exits with its status.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, shapedlink.ProfileUsage())
	}
	if err := cli.ParseWithArgs(fs, args); err != nil {
		return config{}, err
	}
	c := config{run: overlink.Config{Server: *server, Client: fs.Args(), Queue: *queue, ServerWait: *serverWait, Grace: *grace}, record: *record}
	if c.record == "-" {
		c.record = "" // what "-" always meant: no record
	}
	var perr, oerr error
	c.run.Profile, perr = link.Profile()
	c.run.Link, oerr = link.Options()
	errs := []error{perr, oerr}
	var err error
	if c.run.ServerPort, err = overlink.ParseServerPort(*serverPort); err != nil {
		errs = append(errs, fmt.Errorf("-server-port %w", err))
	}
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "server-port" || f.Name == "server-wait") && c.run.Server == "" {
			errs = append(errs, fmt.Errorf("-%s is about the server command: give -server too, or leave -%s out", f.Name, f.Name))
		}
	})
	if c.run.ServerWait < 0 || c.run.Grace < 0 {
		errs = append(errs, errors.New("-server-wait and -grace must not be negative"))
	}
	if c.run.Queue && c.record == "" {
		errs = append(errs, errors.New("-queue samples into the record: give -record FILE too"))
	}
	return c, errors.Join(errs...)
}

func main() {
	gorun.Follow()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err == nil {
		// Before anything starts: a record that cannot be written would
		// otherwise be found out only after the whole run.
		err = checkRecordPath(c.record)
	}
	if err != nil {
		return cli.Exit(stderr, "overlink", err)
	}
	return overLink(c, stdin, stdout, stderr)
}

// checkRecordPath says why a record could not be written to path ("" for
// no record): not a regular file, or in no directory this process can
// create a file in. It tries what writing the record will do: make the
// missing directories (it only looks for the nearest existing one) and
// create a file beside the record.
func checkRecordPath(path string) error {
	if path == "" {
		return nil
	}
	fail := func(why string, err error) error {
		return fmt.Errorf("-record %s: %s: %w; give a path in a directory you can write, or leave -record out", path, why, err)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fail("exists and is not a regular file", fs.ErrExist)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("cannot look at it", err)
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fail(dir+" is not a directory", fs.ErrInvalid)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return fail("cannot look at "+dir, err)
		}
		dir = filepath.Dir(dir)
	}
	f, err := os.CreateTemp(dir, ".overlink-record-check-*")
	if err != nil {
		return fail("cannot create a file in "+dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// finish writes the record where -record asks, or a short summary on
// stderr without it; warnings about the link go to stderr either way. A
// record that cannot be written is reported on stderr; it does not change
// the exit status, which is the client's.
func finish(c config, rec *overlink.Record, stderr io.Writer) {
	if c.record == "" {
		for _, line := range rec.Summary() {
			fmt.Fprintln(stderr, "overlink:", line)
		}
	}
	for _, w := range rec.Warnings() {
		fmt.Fprintln(stderr, "overlink: warning:", w)
	}
	if c.record == "" {
		fmt.Fprintln(stderr, "overlink: -record FILE keeps the link as applied and its counters as JSON")
		return
	}
	if err := results.WriteJSON(c.record, rec); err != nil {
		fmt.Fprintf(stderr, "overlink: the record was not written: %v (the exit status is still the client command's)\n", err)
	}
}
