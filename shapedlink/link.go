package shapedlink

import (
	"errors"
	"log/slog"
	"net/netip"
	"sync"
)

// Link is a shaped link between a server and a client end. Build it with
// New, use Server and Client, check Err after a run, and Close it.
// Instruments has what a bench reads, Control what an experiment does to
// the path.
type Link struct {
	profile     Profile
	dirs        [2]Direction // resolved, schedules and traces loaded once
	backend     Backend
	mode        Mode
	offloadMode OffloadMode
	udpSegOff   bool // UDP segmentation offload off: the shaper cannot read it here (vnetCarriesUDPGSO)
	log         *slog.Logger

	server, client, shaperNS *Namespace

	shaper shaper
	// What the namespace backends build; zero in process.
	netemAvailable bool
	offload        []Offload
	counters       [2]*nftCounters
	cross          *crossFlows

	closeMu sync.Mutex
	closed  bool
}

// Close stops the shaping and releases the ends, with the veths and
// nftables tables in them (a socket still open keeps its namespace, not
// the shaping); it waits up to 0.5 s for the kernel to tear them down.
// In process it closes every socket of both ends. Close is idempotent.
func (l *Link) Close() error {
	l.closeMu.Lock()
	if l.closed {
		l.closeMu.Unlock()
		return nil
	}
	l.closed = true
	l.closeMu.Unlock()
	var errs []error
	l.cross.stop()
	if l.shaper != nil {
		if err := l.shaper.close(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, closeNamespaces(l.server, l.client, l.shaperNS)...)
	return errors.Join(errs...)
}

// Err reports why the link is no longer intact (the shaper process has
// exited, netem stopped following its schedule), or nil. Check it after
// every run.
func (l *Link) Err() error {
	l.closeMu.Lock()
	closed := l.closed
	l.closeMu.Unlock()
	if closed {
		return errors.New("shapedlink: the link was closed")
	}
	if err := l.cross.err(); err != nil {
		return err
	}
	return l.shaper.err()
}

// Server is the server's end.
func (l *Link) Server() *Namespace { return l.server }

// Client is the client's end.
func (l *Link) Client() *Namespace { return l.client }

// Namespace is end e.
func (l *Link) Namespace(e End) *Namespace {
	if e == ClientEnd {
		return l.client
	}
	return l.server
}

// ServerAddr is the server end's IPv4 address (198.18.0.1).
func (l *Link) ServerAddr() netip.Addr { return serverAddr }

// ClientAddr is the client end's IPv4 address (198.18.0.2).
func (l *Link) ClientAddr() netip.Addr { return clientAddr }

// Profile is the profile the link was built for.
func (l *Link) Profile() Profile { return l.profile }

// Backend is the backend in use (never BackendAuto).
func (l *Link) Backend() Backend { return l.backend }

// Mode is the privilege mode the link was built in (never ModeAuto;
// ModeInProcess for BackendInProcess).
func (l *Link) Mode() Mode { return l.mode }

// Applied describes the shaping in force, one tc-like line per
// direction (netem's read back from the kernel).
func (l *Link) Applied() []string { return append([]string(nil), l.shaper.applied()...) }
