package measure

import (
	"errors"
	"fmt"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// PrepareOptions returns the server's and the client's transport options
// for one run of arm carrying w, from the caller's o: Channels set from the
// workload (o.Channels must be 0 or agree), then the arm's own preparation
// (see Preparer). Run calls it; code that runs each end in a process of
// its own calls it once and hands each end its half.
func PrepareOptions(arm Arm, w spicelike.Config, o transport.Options) (server, client transport.Options, err error) {
	if arm == nil {
		return server, client, errors.New("no arm given: use one of measure.Arms(), or measure.Lookup(name)")
	}
	if err := w.Validate(); err != nil {
		return server, client, fmt.Errorf("the workload: %w", err)
	}
	if o.Channels != 0 && o.Channels != len(w.Channels) {
		return server, client, fmt.Errorf("transport.Options.Channels is %d but the workload has %d channels: leave Channels 0 and it is set from the workload",
			o.Channels, len(w.Channels))
	}
	o.Channels = len(w.Channels)
	if p, ok := arm.(Preparer); ok {
		return p.Prepare(o, w)
	}
	return o, o, nil
}

// options are the server's and the client's transport options for a run
// across path, from the caller's (at most one) and what the run needs.
func options(path Path, arm Arm, w spicelike.Config, opts []transport.Options) (server, client transport.Options, err error) {
	if len(opts) > 1 {
		return server, client, fmt.Errorf("give at most one transport.Options, got %d", len(opts))
	}
	if path.ServerAddr == "" {
		return server, client, errors.New("Path.ServerAddr is empty: use OverLink(link) or Loopback(), " +
			"or set the ip:port the server listens on (port 0 picks one)")
	}
	var o transport.Options
	if len(opts) == 1 {
		o = opts[0]
	}
	if o.Listen != nil || o.ListenPacket != nil || o.DialContext != nil {
		return server, client, errors.New("transport.Options has socket hooks set: Run takes each end's sockets from the Path " +
			"(Path.Server and Path.Client), so set them there and leave Options.Listen, ListenPacket and DialContext nil")
	}
	if server, client, err = PrepareOptions(arm, w, o); err != nil {
		return server, client, err
	}
	server.Listen, server.ListenPacket, server.DialContext = path.Server.Listen, path.Server.ListenPacket, path.Server.DialContext
	client.Listen, client.ListenPacket, client.DialContext = path.Client.Listen, path.Client.ListenPacket, path.Client.DialContext
	return server, client, nil
}
