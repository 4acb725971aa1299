package simcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Config is the agreement: which profiles, how the probes are sized, and
// whether the emulator's rows run.
type Config struct {
	// Profiles are the profiles to check, as shapedlink.ParseProfile
	// reads them; the table groups its rows by them in this order. One
	// that does not parse gives rows that did not run.
	Profiles []string
	// Seed seeds every link, the same for every carrier, so the same
	// datagrams are lost.
	Seed uint64
	// Probes sizes the probes.
	Probes Probes
	// Emulator runs the emulator's rows, the reference the others are
	// read against (Linux, root or unprivileged user namespaces).
	Emulator bool
	// EmulatorUnavailable, when not nil, is why the emulator cannot run
	// here (shapedlink.Reexec's error, say): its rows say so instead.
	EmulatorUnavailable error
	// Progress gets a line as each real-time carrier starts; nil for
	// none.
	Progress io.Writer
}

// Probes sizes the three probes.
type Probes struct {
	Bulk       time.Duration // the bulk transfer's length
	BulkWarmup time.Duration // its leading part left out of the goodput
	PacketSize int           // QUIC packet size, 1200 to 1452 (transport.Options.PacketSize)
	Echoes     int           // idle echoes, one every EchoGap
	EchoGap    time.Duration // the pause after each echo
	Datagrams  int           // numbered datagrams, one every Spacing
	Spacing    time.Duration // sparse enough that the limit never binds
}

// DefaultProfiles are the agreement's profiles by default: the headline's,
// its lossy cell, the slow one, burst loss (1% in bursts of 3) and jitter.
func DefaultProfiles() []string {
	return []string{"80:10", "80:10:1", "150:2:1", "80:10,loss=ge:0.3367/33.33", "80:10,jitter=5/normal"}
}

// DefaultProbes are the probes' sizes by default.
func DefaultProbes() Probes {
	return Probes{Bulk: 20 * time.Second, BulkWarmup: 3 * time.Second, PacketSize: transport.MaxVirtualPacketSize,
		Echoes: 500, EchoGap: 20 * time.Millisecond, Datagrams: 2500, Spacing: 4 * time.Millisecond}
}

// validate says what in p the probes cannot run with, or nil.
func (p Probes) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("simcheck: "+format, a...)) }
	if p.PacketSize < transport.MinPacketSize || p.PacketSize > transport.MaxPacketSize {
		bad("Probes.PacketSize %d: give %d to %d", p.PacketSize, transport.MinPacketSize, transport.MaxPacketSize)
	}
	if p.Bulk <= 0 || p.BulkWarmup < 0 || p.BulkWarmup >= p.Bulk {
		bad("Probes.Bulk %v, BulkWarmup %v: give a transfer longer than its warm-up, which may be 0", p.Bulk, p.BulkWarmup)
	}
	if p.Echoes < 1 || p.EchoGap < 0 {
		bad("Probes.Echoes %d, EchoGap %v: give at least one echo and a gap of 0 or more", p.Echoes, p.EchoGap)
	}
	if p.Datagrams < 1 || p.Spacing <= 0 {
		bad("Probes.Datagrams %d, Spacing %v: give at least one datagram and a spacing above 0", p.Datagrams, p.Spacing)
	}
	return errors.Join(errs...)
}

// Carrier is what carries a row's links.
type Carrier string

// The carriers a profile runs on, in the table's order. The emulator is
// the reference the others are read against.
const (
	onEmulator Carrier = "emulator"
	onRealTime Carrier = "inproc, real time"
	onVirtual  Carrier = "inproc, virtual time"
)

// Row is one profile on one carrier: the probes' results, or why it did
// not run.
type Row struct {
	Profile string
	Carrier Carrier
	Err     error   // why the row did not run, or nil
	Goodput float64 // the bulk transfer's, Mbit/s
	Echo    Echo
	Lost    []bool // which numbered datagrams were lost, in order
}

// Echo is an idle echo's round trips.
type Echo struct {
	P50, P99 time.Duration
	Sent     int
	Lost     int // given up after a second
}

// Run runs the agreement: the probes of every profile on every carrier,
// the real-time rows first, then the virtual-time ones, each in a synctest
// bubble of t. When ctx ends, the rows still to run say so instead. err
// says only what in c (or a nil t) Run cannot use; Table.Verdict judges
// the rows.
func Run(ctx context.Context, t *testing.T, c Config) (Table, error) {
	if t == nil {
		return Table{}, errors.New("simcheck: Run needs a test's *testing.T, for synctest's bubbles")
	}
	if len(c.Profiles) == 0 {
		return Table{}, errors.New("simcheck: Config.Profiles is empty: give at least one (DefaultProfiles, say)")
	}
	if err := c.Probes.validate(); err != nil {
		return Table{}, err
	}
	var rows []Row
	for _, p := range c.Profiles {
		if c.Emulator {
			rows = append(rows, c.realTime(ctx, p, onEmulator, shapedlink.BackendEmulator, c.EmulatorUnavailable))
		}
		rows = append(rows, c.realTime(ctx, p, onRealTime, shapedlink.BackendInProcess, nil))
		rows = append(rows, Row{Profile: p, Carrier: onVirtual}) // filled in below
	}
	for i := range rows {
		if rows[i].Carrier != onVirtual {
			continue
		}
		if err := ctx.Err(); err != nil {
			rows[i].Err = err
			continue
		}
		// Inside the bubble, nothing of ctx: a channel from outside
		// would keep the bubble's goroutines from ever blocking durably.
		synctest.Test(t, func(t *testing.T) {
			rows[i] = probeAll(context.Background(), rows[i].Profile, onVirtual, shapedlink.BackendInProcess, c.Seed, c.Probes)
		})
	}
	return Table{Rows: rows}, nil
}

// realTime runs the probes over profile on backend in real time, unless
// unavailable says why it cannot or ctx has ended.
func (c Config) realTime(ctx context.Context, profile string, carrier Carrier, backend shapedlink.Backend, unavailable error) Row {
	if unavailable == nil {
		unavailable = ctx.Err()
	}
	if unavailable != nil {
		return Row{Profile: profile, Carrier: carrier, Err: unavailable}
	}
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "simcheck: %s on the %s\n", profile, carrier)
	}
	return probeAll(ctx, profile, carrier, backend, c.Seed, c.Probes)
}

// probeAll runs each probe over a fresh link of profile on backend, in
// whatever time the caller runs in.
func probeAll(ctx context.Context, profile string, carrier Carrier, backend shapedlink.Backend, seed uint64, probes Probes) Row {
	r := Row{Profile: profile, Carrier: carrier}
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		r.Err = err
		return r
	}
	fresh := func(probe func(*shapedlink.Link) error) {
		if r.Err != nil {
			return
		}
		link, err := shapedlink.New(ctx, p, shapedlink.Options{Backend: backend, Seed: seed})
		if err != nil {
			r.Err = err
			return
		}
		defer link.Close()
		r.Err = probe(link)
	}
	fresh(func(l *shapedlink.Link) (err error) { r.Goodput, err = bulk(ctx, l, probes); return err })
	fresh(func(l *shapedlink.Link) (err error) { r.Echo, err = echo(ctx, l, probes); return err })
	fresh(func(l *shapedlink.Link) (err error) { r.Lost, err = lossPattern(ctx, l, probes); return err })
	return r
}
