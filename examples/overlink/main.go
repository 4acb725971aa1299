package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// config is what the command line asks for.
type config struct {
	profile    shapedlink.Profile
	server     string
	client     []string
	backend    shapedlink.Backend
	offload    shapedlink.OffloadMode
	seed       uint64
	record     string // "" for none
	queue      bool
	serverWait time.Duration
	serverPort listenWant // what the server command must listen on before the client starts
	grace      time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("overlink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "80:10", "link profile, "+shapedlink.ProfileGrammar+", e.g. 80:10:1 or 20:50,up.rate=5,down.loss=ge:1/30 (the options are listed below)")
	server := fs.String("server", "", "command to run in the server namespace first (through sh -c as \"exec command\", so one command with the shell's quoting and $variables), e.g. \"iperf3 -s -1 -B $QB_SERVER_ADDR\"")
	backend := fs.String("backend", "", "link backend: netem, emulator, or empty to choose (netem where the kernel has it)")
	seed := fs.Uint64("seed", 0, "emulator loss seed (0: random, recorded)")
	offload := fs.String("offload", "keep", "keep: the ends keep the kernel's segmentation offloads, so programs send and receive super-packets as on a host and the link carries gigabits (the emulator still judges every wire segment); "+
		"wire: every device pinned to wire-sized packets, as the bench's matrices run. Choose wire for wire-sized queue slots (netem and the ends' qdiscs count a super-packet as one packet), "+
		"to compare a run with the bench's and its offload evidence (package gsocheck), or for a link of a few hundred Mbit/s or less on a small machine, "+
		"whose wire-sized ends carry about that much (above it the host, not the profile, sets the rate; the summary warns when the emulator runs late)")
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
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	c := config{server: *server, client: fs.Args(), backend: shapedlink.Backend(*backend), seed: *seed,
		record: *record, queue: *queue, serverWait: *serverWait, grace: *grace}
	if c.record == "-" {
		c.record = "" // what "-" always meant: no record
	}
	var errs []error
	p, err := shapedlink.ParseProfile(*profile)
	if err != nil {
		errs = append(errs, err)
	}
	c.profile = p
	if c.offload, err = shapedlink.ParseOffloadMode(*offload); err != nil {
		errs = append(errs, fmt.Errorf("-offload %w", err))
	}
	switch c.backend {
	case shapedlink.BackendAuto, shapedlink.BackendNetem, shapedlink.BackendEmulator:
	default:
		errs = append(errs, fmt.Errorf("-backend %q: want netem, emulator or empty", *backend))
	}
	if c.serverPort, err = parseListenWant(*serverPort); err != nil {
		errs = append(errs, fmt.Errorf("-server-port %w", err))
	}
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "server-port" || f.Name == "server-wait") && c.server == "" {
			errs = append(errs, fmt.Errorf("-%s is about the server command: give -server too, or leave -%s out", f.Name, f.Name))
		}
	})
	if c.serverWait < 0 || c.grace < 0 {
		errs = append(errs, errors.New("-server-wait and -grace must not be negative"))
	}
	if c.queue && c.record == "" {
		errs = append(errs, errors.New("-queue samples into the record: give -record FILE too"))
	}
	return c, errors.Join(errs...)
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		// Before anything starts: a record that cannot be written would
		// otherwise be found out only after the whole run.
		err = checkRecordPath(c.record)
	}
	if err != nil {
		fmt.Fprintln(stderr, "overlink:", err)
		return 2
	}
	return overLink(c, stdin, stdout, stderr)
}
