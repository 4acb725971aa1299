package measure

import (
	"errors"
	"fmt"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// options are the server's and the client's transport options for a run,
// from the caller's (at most one) and what the run needs.
func options(path Path, arm transport.Arm, w spicelike.Config, opts []transport.Options) (server, client transport.Options, err error) {
	if len(opts) > 1 {
		return server, client, fmt.Errorf("give at most one transport.Options, got %d", len(opts))
	}
	if _, err := transport.ParseArm(string(arm)); err != nil {
		return server, client, err
	}
	if err := w.Validate(); err != nil {
		return server, client, fmt.Errorf("the workload: %w", err)
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
		return server, client, errors.New("transport.Options has socket hooks set: Arm takes each end's sockets from the Path " +
			"(Path.Server and Path.Client), so set them there and leave Options.Listen, ListenPacket and DialContext nil")
	}
	if o.Channels != 0 && o.Channels != len(w.Channels) {
		return server, client, fmt.Errorf("transport.Options.Channels is %d but the workload has %d channels: leave Channels 0 and Arm sets it",
			o.Channels, len(w.Channels))
	}
	o.Channels = len(w.Channels)
	if arm == transport.ArmQUICPriority && !o.Priority {
		o.PriorityChannel = -1
		for i, ch := range w.Channels {
			if ch.Role == spicelike.Interactive {
				o.PriorityChannel = i
			}
		}
		if o.PriorityChannel < 0 {
			return server, client, fmt.Errorf("the %s arm prioritises the workload's interactive channel, and it has none: "+
				"add one, or set transport.Options.Priority and PriorityChannel to choose the channel", arm)
		}
	}
	server, client = o, o
	if arm.IsQUIC() {
		cert := o.Certificate
		if len(cert.CertPEM) == 0 && len(cert.KeyPEM) == 0 {
			if cert, err = transport.NewCertificate(); err != nil {
				return server, client, err
			}
		}
		server.Certificate, client.Certificate = cert, cert.ClientOnly()
	}
	server.Listen, server.ListenPacket, server.DialContext = path.Server.Listen, path.Server.ListenPacket, path.Server.DialContext
	client.Listen, client.ListenPacket, client.DialContext = path.Client.Listen, path.Client.ListenPacket, path.Client.DialContext
	return server, client, nil
}
