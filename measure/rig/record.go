package rig

import (
	"encoding/json"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// RecordWorkload puts what the workload measured into run: the client's
// samples, goodput and errors, and the server's errors.
func RecordWorkload(run *results.Run, c *spicelike.ClientResult, s *spicelike.ServerResult) {
	if c != nil {
		run.BulkBytesTotal = c.BulkBytesTotal
		run.Samples, run.SamplesStart = c.Samples, c.Start
		run.Timeouts = c.Timeouts
		run.ThroughputMbit = c.BulkMbps
		run.BulkBytes = c.BulkBytesWindow
		for _, e := range c.Errors {
			run.ChannelErrors = append(run.ChannelErrors, "client "+e.Error())
		}
	}
	if s != nil {
		for _, e := range s.Errors {
			run.ChannelErrors = append(run.ChannelErrors, "server "+e.Error())
		}
	}
}

// RecordStates puts the two ends' transport states into run, and the
// client's connect time.
func RecordStates(run *results.Run, server, client *transport.State) {
	if server != nil {
		run.Server = encodeState(server)
	}
	if client != nil {
		run.Client = encodeState(client)
		run.ConnectTime = client.ConnectTime
	}
}

// encodeState turns a transport state into raw JSON for the run record.
func encodeState(s *transport.State) json.RawMessage {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}
