package spicelike

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Tags ReplayFromTraces reads on a client trace's records (set by the
// analysis that knows which area the keys type into).
const (
	// TagKey marks a key press the replay times from.
	TagKey = "key"
	// TagEcho marks the server message that answers the key tagged before
	// it: the first draw of the typed-into area.
	TagEcho = "echo"
)

// traceMsg is a data record with its wall-clock time and the index of its
// twin in the other trace.
type traceMsg struct {
	rec  spicetrace.Record
	wall time.Time
}

type chanDir struct {
	ch  int
	dir spicetrace.Direction
}

// dataByChannel groups a trace's data records by channel and direction, in
// the order they passed.
func dataByChannel(t *spicetrace.Trace) map[chanDir][]traceMsg {
	out := map[chanDir][]traceMsg{}
	for _, r := range t.Records {
		if r.Stage != spicetrace.StageData {
			continue
		}
		k := chanDir{r.Channel, r.Dir}
		out[k] = append(out[k], traceMsg{rec: r, wall: t.Header.Started.Add(r.T)})
	}
	return out
}

// ReplayFromTraces builds a Replay from one session traced at both ends of
// a SPICE tunnel, over the window [from, to) of the client trace's time
// (the traces' wall clocks must be one host's). What the client sent is
// scheduled at its time in the client's trace, what the server sent at its
// time in the server's, from the window's start; records tagged TagKey are
// the keys and those tagged TagEcho the echo of the key before them, timed
// from the key's arrival at the server to the echo's departure (the
// server's think time). The link stage and channels with no data message
// in the window are left out. A record matches its place among its
// channel's records in the other trace; the two must agree on type and
// size, or the traces are not of one session.
func ReplayFromTraces(client, server *spicetrace.Trace, from, to time.Duration) (*Replay, error) {
	switch {
	case client == nil || server == nil:
		return nil, errors.New("spicelike: ReplayFromTraces needs both traces")
	case client.Header.Side != spicetrace.SideClient || server.Header.Side != spicetrace.SideServer:
		return nil, fmt.Errorf("spicelike: traces written by the %q and %q ends, want the client's and the server's", client.Header.Side, server.Header.Side)
	case from < 0 || to <= from:
		return nil, fmt.Errorf("spicelike: replay window [%v, %v) is empty", from, to)
	}
	cl, sv := dataByChannel(client), dataByChannel(server)
	for k, msgs := range cl {
		twins := sv[k]
		// The sender's trace may end with messages the receiver's did
		// not see arrive before the session ended: they are left out.
		sender, receiver := len(twins), len(msgs)
		if k.dir == spicetrace.ClientToServer {
			sender, receiver = receiver, sender
		}
		if sender < receiver {
			return nil, fmt.Errorf("spicelike: channel %d %s has %d data messages in the client's trace and %d in the server's: not one session's traces",
				k.ch, k.dir, len(msgs), len(twins))
		}
		msgs, twins = msgs[:receiver], twins[:receiver]
		cl[k], sv[k] = msgs, twins
		for i := range msgs {
			if a, b := msgs[i].rec, twins[i].rec; a.Type != b.Type || a.Size != b.Size {
				return nil, fmt.Errorf("spicelike: channel %d %s message %d is type %d, %d bytes in the client's trace but type %d, %d bytes in the server's",
					k.ch, k.dir, i, a.Type, a.Size, b.Type, b.Size)
			}
		}
	}
	b := &replayBuilder{start: client.Header.Started.Add(from), end: client.Header.Started.Add(to), chans: map[int]*ReplayChannel{}}
	if err := b.tags(cl, sv); err != nil {
		return nil, err
	}
	for k, msgs := range cl {
		for i, m := range msgs {
			b.add(k, i, m, sv[k][i])
		}
	}
	return b.finish(client, from, to)
}

type replayBuilder struct {
	start, end time.Time
	chans      map[int]*ReplayChannel
	keyOf      map[chanDir]map[int]int // client key records: place → key number
	echoOf     map[chanDir]map[int]int // echo records: place → key number
	keyAt      []time.Time             // each key's arrival at the server's end
	keys       int
}

// tags numbers the tagged keys in the window in time order and pairs each
// echo with the key before it.
func (b *replayBuilder) tags(cl, sv map[chanDir][]traceMsg) error {
	type tagged struct {
		k     chanDir
		i     int
		m     traceMsg
		echo  bool
		twinT time.Time
	}
	var all []tagged
	for k, msgs := range cl {
		for i, m := range msgs {
			if m.rec.Tag == TagKey || m.rec.Tag == TagEcho {
				all = append(all, tagged{k, i, m, m.rec.Tag == TagEcho, sv[k][i].wall})
			}
		}
	}
	slices.SortFunc(all, func(x, y tagged) int { return x.m.wall.Compare(y.m.wall) })
	b.keyOf, b.echoOf = map[chanDir]map[int]int{}, map[chanDir]map[int]int{}
	last := -1
	for _, t := range all {
		switch {
		case !t.echo && t.m.rec.Dir == spicetrace.ClientToServer && b.inWindow(t.m.wall):
			last = b.keys
			b.keys++
			b.keyAt = append(b.keyAt, t.twinT)
			put(b.keyOf, t.k, t.i, last)
		case !t.echo:
			if t.m.rec.Dir != spicetrace.ClientToServer {
				return fmt.Errorf("spicelike: a record tagged %q goes from the server: keys go to it", TagKey)
			}
			last = -1 // a key outside the window: its echo is not replayed either
		case t.m.rec.Dir != spicetrace.ServerToClient:
			return fmt.Errorf("spicelike: a record tagged %q goes to the server: echoes come from it", TagEcho)
		case last >= 0:
			put(b.echoOf, t.k, t.i, last)
			last = -1 // one echo per key
		}
	}
	return nil
}

func put(m map[chanDir]map[int]int, k chanDir, i, v int) {
	if m[k] == nil {
		m[k] = map[int]int{}
	}
	m[k][i] = v
}

func (b *replayBuilder) inWindow(t time.Time) bool { return !t.Before(b.start) && t.Before(b.end) }

// add places message i of channel and direction k, given as the
// client's record and the server's.
func (b *replayBuilder) add(k chanDir, i int, cm, sm traceMsg) {
	var m ReplayMessage
	toClient := k.dir == spicetrace.ServerToClient
	switch key, isEcho := b.echoOf[k][i]; {
	case isEcho:
		m = ReplayMessage{At: max(0, sm.wall.Sub(b.keyAt[key])), ToClient: true, Size: cm.rec.Size, Kind: KindEcho, Key: key}
	case toClient && b.inWindow(sm.wall):
		m = ReplayMessage{At: sm.wall.Sub(b.start), ToClient: true, Size: cm.rec.Size}
	case !toClient && b.inWindow(cm.wall):
		m = ReplayMessage{At: cm.wall.Sub(b.start), Size: cm.rec.Size}
		if key, ok := b.keyOf[k][i]; ok {
			m.Kind, m.Key = KindKey, key
		}
	default:
		return
	}
	c := b.chans[k.ch]
	if c == nil {
		c = &ReplayChannel{}
		b.chans[k.ch] = c
	}
	c.Messages = append(c.Messages, m)
	if c.Name == "" && cm.rec.ChannelType != "" {
		c.Name = cm.rec.ChannelType
		if cm.rec.ChannelID != 0 {
			c.Name += fmt.Sprint(cm.rec.ChannelID)
		}
	}
}

// finish orders the channels by index, names them uniquely, puts each
// direction's messages in time order and checks the result.
func (b *replayBuilder) finish(client *spicetrace.Trace, from, to time.Duration) (*Replay, error) {
	r := &Replay{Source: fmt.Sprintf("SPICE traces (client trace started %s), window %v to %v", client.Header.Started.Format(time.RFC3339), from, to),
		Span: to - from, Keys: b.keys}
	idx := make([]int, 0, len(b.chans))
	for ch := range b.chans {
		idx = append(idx, ch)
	}
	slices.Sort(idx)
	used := map[string]bool{}
	for _, ch := range idx {
		c := b.chans[ch]
		if c.Name == "" {
			c.Name = "channel"
		}
		if used[c.Name] {
			c.Name = fmt.Sprintf("%s#%d", c.Name, ch)
		}
		used[c.Name] = true
		c.Messages = inTimeOrder(c.Messages)
		r.Channels = append(r.Channels, *c)
	}
	if len(r.Channels) == 0 {
		return nil, fmt.Errorf("spicelike: no data message in the replay window [%v, %v)", from, to)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// inTimeOrder puts each direction's scheduled messages in time order: the
// client's, then the server's, then the echoes (which are timed from their
// keys, not from the span).
func inTimeOrder(ms []ReplayMessage) []ReplayMessage {
	var up, down, echoes []ReplayMessage
	for _, m := range ms {
		switch {
		case m.Kind == KindEcho:
			echoes = append(echoes, m)
		case m.ToClient:
			down = append(down, m)
		default:
			up = append(up, m)
		}
	}
	byAt := func(x, y ReplayMessage) int { return cmp.Compare(x.At, y.At) }
	slices.SortStableFunc(up, byAt)
	slices.SortStableFunc(down, byAt)
	return slices.Concat(up, down, echoes)
}
