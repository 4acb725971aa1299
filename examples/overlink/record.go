package main

import (
	"errors"
	"fmt"
	"github.com/shakenfist/quicbench/internal/buildinfo"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Record is what overlink writes on exit, with -record.
type Record struct {
	Profile       string    `json:"profile"`
	Backend       string    `json:"backend"`
	Mode          string    `json:"mode"`
	Applied       []string  `json:"applied"`
	ServerCommand []string  `json:"server_command,omitempty"`
	ClientCommand []string  `json:"client_command"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	// Build is which code ran overlink (its commit, and where that came
	// from), so a record can be reproduced.
	Build buildinfo.Info `json:"build"`
	// ExitCode is the client command's: its exit status, or 128 plus the
	// signal that ended it; -1 when it did not run to its end (Error says
	// why).
	ExitCode int `json:"exit_code"`
	// Shaper is the emulator's own account (nil with netem).
	Shaper *shapedlink.ShaperReport `json:"shaper,omitempty"`
	// Egress is each end's egress-hook counters: every packet that left it,
	// and those longer than one wire packet.
	Egress map[string]shapedlink.EgressCounters `json:"egress,omitempty"`
	// Queue is the server end's egress queue, sampled every millisecond
	// (with -queue).
	Queue []shapedlink.QueueSample `json:"queue,omitempty"`
	// LinkError says the link broke while the command ran (the emulator's
	// shaper exited): what the command measured is then not the link's.
	LinkError string `json:"link_error,omitempty"`
	Error     string `json:"error,omitempty"`
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

// finish writes the record where -record asks, or a one-line summary on
// stderr without it. A record that cannot be written is reported on
// stderr; it does not change the exit status, which is the client's.
func finish(c config, rec *Record, stderr io.Writer) {
	if c.record == "" {
		fmt.Fprintln(stderr, "overlink:", summary(rec))
		return
	}
	if err := results.WriteJSON(c.record, rec); err != nil {
		fmt.Fprintf(stderr, "overlink: the record was not written: %v (the exit status is still the client command's)\n", err)
	}
}

// summary is one line on how the run went, naming -record.
func summary(rec *Record) string {
	s := fmt.Sprintf("%.1f s over %s", rec.Finished.Sub(rec.Started).Seconds(), rec.Profile)
	if rec.Backend != "" {
		s += " (" + rec.Backend + ")"
	}
	if rec.ExitCode >= 0 {
		s += fmt.Sprintf("; the client exited %d", rec.ExitCode)
	} else {
		s += "; the client did not run to its end"
	}
	if srv, ok := rec.Egress["server"]; ok {
		s += fmt.Sprintf("; packets sent: server %d, client %d", srv.All.Packets, rec.Egress["client"].All.Packets)
	}
	return s + "; -record FILE keeps the link as applied and its counters as JSON"
}
