//go:build !linux

package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// errUnsupported is what New, Reexec and every method that would touch a
// namespace return where network namespaces do not exist (any system but
// Linux).
var errUnsupported = fmt.Errorf("shapedlink: %w: network namespaces need Linux", errors.ErrUnsupported)

// Link is a shaped link between a server and a client namespace. Links
// need Linux: elsewhere New always fails and no Link exists, so its
// methods return errors wrapping errors.ErrUnsupported, or zero values.
type Link struct {
	_ [0]func() // not comparable, as on Linux
}

// New builds the link for p. Links need Linux network namespaces: on this
// system New returns an error wrapping errors.ErrUnsupported.
func New(ctx context.Context, p Profile, opts Options) (*Link, error) {
	return nil, errUnsupported
}

// Reexec gets the privilege to build links. On this system links cannot be
// built at all, so it returns an error wrapping errors.ErrUnsupported.
func Reexec() error { return errUnsupported }

// Close does nothing: no link exists on this system.
func (l *Link) Close() error { return nil }

// ScheduleStart is the zero Time: no link runs on this system.
func (in *Instruments) ScheduleStart() time.Time { return time.Time{} }

// AppliedChanges returns nothing: no link runs on this system.
func (in *Instruments) AppliedChanges() ([]AppliedChange, error) { return nil, errUnsupported }

// Server is the server's namespace: nil on this system.
func (l *Link) Server() *Namespace { return nil }

// Client is the client's namespace: nil on this system.
func (l *Link) Client() *Namespace { return nil }

// ServerAddr is the server end's IPv4 address (198.18.0.1).
func (l *Link) ServerAddr() netip.Addr { return serverAddr }

// ClientAddr is the client end's IPv4 address (198.18.0.2).
func (l *Link) ClientAddr() netip.Addr { return clientAddr }

// Profile is the profile the link was built for: the zero Profile here.
func (l *Link) Profile() Profile { return Profile{} }

// Backend is the backend in use: BackendAuto here, since none runs.
func (l *Link) Backend() Backend { return BackendAuto }

// Mode is the privilege mode the link was built in: ModeAuto here.
func (l *Link) Mode() Mode { return ModeAuto }

// Device is the name of the veth device at end e: "" here.
func (in *Instruments) Device(e End) string { return "" }

// Namespace is the namespace of end e: nil here.
func (l *Link) Namespace(e End) *Namespace { return nil }

// Applied describes the shaping in force: nothing here.
func (l *Link) Applied() []string { return nil }

// Offload is the offload settings of every veth end: none here.
func (in *Instruments) Offload() []Offload { return nil }

// Err reports whether the link is intact; here it never is.
func (l *Link) Err() error { return errUnsupported }

// EmulatorPID is the shaper process's id: 0 here.
func (in *Instruments) EmulatorPID() int { return 0 }

// ShaperStats returns the emulator's counters: none here.
func (in *Instruments) ShaperStats() (ShaperReport, bool) { return ShaperReport{}, false }

// HostState reads the record for this link; here it fails.
func (in *Instruments) HostState() (HostState, error) { return HostState{}, errUnsupported }

// AddClientAddr adds an address to the client end; here it fails.
func (c *Control) AddClientAddr(ctx context.Context) (netip.Addr, error) {
	return netip.Addr{}, errUnsupported
}

// RemoveClientAddr removes an address AddClientAddr added; here it fails.
func (c *Control) RemoveClientAddr(addr netip.Addr) error { return errUnsupported }

// ClientAddrs lists the client end's addresses; here it fails.
func (c *Control) ClientAddrs() ([]netip.Addr, error) { return nil, errUnsupported }

// EgressCounters reads end e's egress counters; here it fails.
func (in *Instruments) EgressCounters(e End) (EgressCounters, error) {
	return EgressCounters{}, errUnsupported
}

// BlockUDP drops every UDP packet end e sends; here it fails.
func (c *Control) BlockUDP(e End) (*Filter, error) { return nil, errUnsupported }

// DropRandom drops pct percent of the packets end e sends; here it fails.
func (c *Control) DropRandom(e End, pct float64) (*Filter, error) { return nil, errUnsupported }

// Sampler returns a sampler for end e's egress queue; here it fails.
func (in *Instruments) Sampler(e End) (*Sampler, error) { return nil, errUnsupported }

// SampleQueue samples end e's egress queue until ctx is done; here it
// fails.
func (in *Instruments) SampleQueue(ctx context.Context, e End, interval time.Duration) ([]QueueSample, error) {
	return nil, errUnsupported
}

// Instruments are what a bench reads about a link while it runs; here
// every one fails or is empty, since no link exists.
type Instruments struct{ l *Link }

// Instruments returns the link's instruments.
func (l *Link) Instruments() *Instruments { return &Instruments{l: l} }

// Control is what an experiment does to a link's path while it runs;
// here every control fails.
type Control struct{ l *Link }

// Control returns the link's controls.
func (l *Link) Control() *Control { return &Control{l: l} }
