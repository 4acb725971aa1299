package keydraw

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// KeyPath is where one key's answer spent its time, read from the traces
// of both tunnel ends; times are on the client end's clock, and a part
// that could not be had is -1. Up + Server + Down is the key-to-draw.
type KeyPath struct {
	// Up is from the key press at the client end to the server end: the
	// carrier and the link, upstream.
	Up time.Duration `json:"up_ns"`
	// Server is from the press at the server end to its draw read from
	// spice-server there: the X server, the xterm, spice-server, and any
	// time the server end left spice-server's bytes unread.
	Server time.Duration `json:"server_ns"`
	// Unread is the part of Server the server end spent writing the
	// display's earlier bytes onward, not reading: -1 for a trace that
	// does not record it (spicetrace.Record.WriteWait). A write under way
	// when the press arrived counts whole, so it is at most Server, and
	// may be over by one write's wait.
	Unread time.Duration `json:"unread_ns"`
	// Down is from the draw read at the server end to its reading at the
	// client end: the carrier's buffers and the link, downstream.
	Down time.Duration `json:"down_ns"`
	// Ahead counts the display bytes read at the server end and not yet
	// at the client end when the draw was read at the server end: what it
	// queued behind in the carrier and on the link.
	Ahead int64 `json:"ahead_bytes"`
}

// msgStream names one direction of one channel of one carrier: its
// messages are the same, in the same order, at both ends.
type msgStream struct {
	carrier string
	ch      int
	dir     spicetrace.Direction
}

// streams indexes a trace's records by msgStream: each record's place in
// its stream, and each stream's records in order.
type streams struct {
	tr    *spicetrace.Trace
	place []int
	recs  map[msgStream][]int
}

func indexStreams(tr *spicetrace.Trace) streams {
	s := streams{tr: tr, place: make([]int, len(tr.Records)), recs: map[msgStream][]int{}}
	for i, r := range tr.Records {
		k := msgStream{r.Carrier, r.Channel, r.Dir}
		s.place[i] = len(s.recs[k])
		s.recs[k] = append(s.recs[k], i)
	}
	return s
}

func (s streams) stream(i int) msgStream {
	r := s.tr.Records[i]
	return msgStream{r.Carrier, r.Channel, r.Dir}
}

// KeyPaths breaks down each key-to-draw a's samples give: a must be the
// analysis of client (a client end's trace), and server the server end's
// trace of the same session. It fails when the two traces disagree on a
// message.
func KeyPaths(client, server *spicetrace.Trace, a Analysis) ([]KeyPath, error) {
	if len(a.sampled) != len(a.Samples) {
		return nil, errors.New("the analysis was not made from a trace here: analyse the client end's trace first")
	}
	cs, ss := indexStreams(client), indexStreams(server)
	off := server.Header.Started.Sub(client.Header.Started)
	at := func(i int) time.Duration { return server.Records[i].T + off }
	match := func(i int) (int, error) {
		k := cs.stream(i)
		list := ss.recs[k]
		if cs.place[i] >= len(list) {
			return 0, fmt.Errorf("message %d of channel %d (%s) is in the client end's trace, not the server end's", cs.place[i], k.ch, k.dir)
		}
		j := list[cs.place[i]]
		if c, s := client.Records[i], server.Records[j]; c.Name != s.Name || c.Size != s.Size {
			return 0, fmt.Errorf("message %d of channel %d (%s) is %s of %d bytes at the client end, %s of %d at the server end", cs.place[i], k.ch, k.dir, c.Name, c.Size, s.Name, s.Size)
		}
		return j, nil
	}
	waits := false
	for _, r := range server.Records {
		waits = waits || r.WriteWait > 0
	}
	out := make([]KeyPath, len(a.sampled))
	for n, p := range a.sampled {
		ks, err := match(p[0])
		if err != nil {
			return nil, err
		}
		ds, err := match(p[1])
		if err != nil {
			return nil, err
		}
		kp := KeyPath{Up: at(ks) - client.Records[p[0]].T, Server: at(ds) - at(ks), Down: client.Records[p[1]].T - at(ds), Unread: -1}
		display := ss.recs[ss.stream(ds)]
		before := display[:ss.place[ds]]
		if waits {
			// The display's last message read at the server end before
			// the press got there.
			prev := time.Duration(0)
			if i, _ := slices.BinarySearchFunc(before, server.Records[ks].T, func(r int, t time.Duration) int {
				return cmpDur(server.Records[r].T, t)
			}); i > 0 {
				prev = server.Records[before[i-1]].WriteWait
			}
			kp.Unread = min(server.Records[ds].WriteWait-prev, kp.Server)
		}
		var sent, got int64
		for _, r := range before {
			sent += int64(server.Records[r].Size)
		}
		for _, r := range cs.recs[cs.stream(p[1])][:cs.place[p[1]]] {
			if client.Records[r].T > at(ds) {
				break
			}
			got += int64(client.Records[r].Size)
		}
		kp.Ahead = sent - got
		out[n] = kp
	}
	return out, nil
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
