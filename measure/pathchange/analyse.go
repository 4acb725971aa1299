package pathchange

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// aroundBefore and aroundAfter bound the samples copied into the record
// so the gap can be seen without opening run.json.
const (
	aroundBefore = time.Second
	aroundAfter  = 4 * time.Second
)

// Record is one run's path change: what happened and what it cost.
type Record struct {
	Cell   results.Cell `json:"cell"`
	Arm    string       `json:"arm"`
	Repeat int          `json:"repeat"`
	Order  string       `json:"order"`
	// ConfiguredAt is when the change was asked for, counted from the
	// client's session coming up; ChangeAt is when it began, as an offset
	// from the workload's start (spicelike's Start), the time base of the
	// samples. Every other offset in the record is relative to ChangeAt.
	ConfiguredAt time.Duration `json:"configured_at_ns"`
	ChangeAt     time.Duration `json:"change_at_ns"`
	ChangeSeen   bool          `json:"change_seen"`
	OldAddr      string        `json:"old_addr"`
	NewAddr      string        `json:"new_addr"`

	// Survived: every channel of the session finished the run's closing
	// exchange on both ends (no channel errors), no interactive round trip
	// timed out, and a round trip sent after the old address went
	// completed (the stall is not Open).
	Survived bool `json:"survived"`
	// Why says what decided Survived.
	Why   string `json:"why"`
	Stall Stall  `json:"stall"`
	// Migration is the client's Migrate result (QUIC arms).
	Migration *transport.MigrationResult `json:"migration,omitempty"`
	// ServerMoved is when the server first sent to the new address,
	// relative to the change; ServerPeers every address set it sent to,
	// in order (a QUIC server may pass through an intermediate address).
	ServerMoved *time.Duration `json:"server_moved_ns,omitempty"`
	ServerPeers []string       `json:"server_peers,omitempty"`
	// ServerOnPath is when the server first sent to the exact address
	// the client migrated to (its new socket), relative to the change.
	// In break-first runs ServerMoved can come earlier: the client's old,
	// wildcard-bound socket starts sending from the new address as soon
	// as the old one is gone, and the server follows that first.
	ServerOnPath   *time.Duration  `json:"server_on_path_ns,omitempty"`
	Timeouts       int             `json:"timeouts"`
	TimeoutOffsets []time.Duration `json:"timeout_offsets_from_change_ns,omitempty"`
	// ClientNoticed is when the client's application first learnt of a
	// problem (an interactive timeout firing, or a connection reported
	// ended), relative to the change; ServerNoticed the same for the
	// server (a connection reported ended, or a channel error before it
	// was told to stop). Nil: never, within the run and the linger.
	ClientNoticed *time.Duration `json:"client_noticed_ns,omitempty"`
	ServerNoticed *time.Duration `json:"server_noticed_ns,omitempty"`
	ClientErrors  []string       `json:"client_errors,omitempty"`
	// TCPEnd is, for the tcp arm, each connection's state as each end
	// last read it (TCP_INFO): whether the kernel ever gave up.
	TCPEnd       []string `json:"tcp_end,omitempty"`
	ServerErrors []string `json:"server_errors,omitempty"`
	// Around is the interactive samples from 1 s before to 4 s after the
	// change, offsets relative to the change.
	Around []spicelike.Sample `json:"around"`
	// Events are both sides' and the link's events, in time order.
	Events []Event `json:"events"`
	// Failed says why the run could not be measured at all.
	Failed string `json:"failed,omitempty"`
}

// changeBegins is the client event that marks the change.
const changeBegins = "path change begins"

// analyse turns what the two roles and the link recorded into a Record.
func analyse(cell results.Cell, arm string, repeat int, c Change, cres, sres roleResult, link []Event) Record {
	rec := Record{Cell: cell, Arm: arm, Repeat: repeat, Order: c.Order, ConfiguredAt: c.At,
		Migration: cres.Migration}
	evs := inTimeOrder(cres.Events, sres.Events, link)
	changeTime, seen := changeBegan(cres.Events)
	rec.ChangeSeen = seen
	cl := cres.Client
	if cl == nil {
		rec.Why = "the client measured nothing"
		rec.Events = evs
		return rec
	}
	if !rec.ChangeSeen {
		// No change happened; analyse as if it were due at the
		// configured time so the record still says something.
		changeTime = cres.SessionUp.Add(c.At)
	}
	rec.ChangeAt = changeTime.Sub(cl.Start)
	for i := range evs {
		evs[i].Offset = evs[i].At.Sub(changeTime)
	}
	rec.Events = evs
	rec.OldAddr, rec.NewAddr = c.OldAddr, c.NewAddr
	rec.serverPaths(sres.Events, cres.Migration, c.NewAddr, changeTime)

	end := cl.End.Sub(cl.Start)
	rec.Stall = stallOf(cl.Samples, rec.ChangeAt, oldAddressGone(link, cl.Start, rec.ChangeAt), end)
	for _, s := range cl.Samples {
		if s.Offset >= rec.ChangeAt-aroundBefore && s.Offset <= rec.ChangeAt+aroundAfter {
			rec.Around = append(rec.Around, spicelike.Sample{Offset: s.Offset - rec.ChangeAt, RTT: s.RTT})
		}
	}
	rec.Timeouts = cl.Timeouts
	for _, o := range cl.TimeoutOffsets {
		rec.TimeoutOffsets = append(rec.TimeoutOffsets, o-rec.ChangeAt)
	}
	rec.noticed(cl, cres.Events, sres, changeTime)
	rec.channelErrors(cl, cres, sres)
	rec.TCPEnd = tcpEnds(cres.State, sres.State, changeTime)
	rec.Survived, rec.Why = survived(rec)
	return rec
}

// inTimeOrder is every event the client, the server and the link
// recorded, in time order.
func inTimeOrder(client, server, link []Event) []Event {
	var evs []Event
	evs = append(evs, client...)
	evs = append(evs, server...)
	evs = append(evs, link...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
	return evs
}

// changeBegan is when the client's events say the change began; false
// when the first path change event the client recorded is not its
// beginning, or there is none.
func changeBegan(client []Event) (time.Time, bool) {
	for _, e := range client {
		if strings.HasPrefix(e.What, changeBegins) {
			return e.At, true
		}
		if strings.HasPrefix(e.What, "path change") {
			break
		}
	}
	return time.Time{}, false
}

// serverPaths reads, from the server's own polling, every address set it
// sent to, when it first sent on the client's new QUIC path and when it
// first sent only to the new address (relative to the change).
func (rec *Record) serverPaths(server []Event, mig *transport.MigrationResult, newAddr string, changeTime time.Time) {
	for _, e := range server {
		addrs, ok := strings.CutPrefix(e.What, "peer address ")
		if !ok {
			continue
		}
		rec.ServerPeers = append(rec.ServerPeers, addrs)
		if rec.ServerOnPath == nil && mig != nil && len(mig.Paths) > 0 && mig.Paths[0].To != "" &&
			strings.Contains(" "+addrs+" ", " "+mig.Paths[0].To+" ") {
			d := e.At.Sub(changeTime)
			rec.ServerOnPath = &d
		}
		if rec.ServerMoved == nil && newAddr != "" && allOn(addrs, newAddr) && e.At.After(changeTime.Add(-time.Second)) {
			d := e.At.Sub(changeTime)
			rec.ServerMoved = &d
		}
	}
}

// oldAddressGone is when the old address went, as an offset from the
// workload's start: the link's event if it came after changeAt, else
// changeAt. The old address may go some time after the change begins
// (after QUIC's migration in make-first runs, or after a descheduled
// client got round to asking); echoes that complete in between prove
// nothing about surviving its loss.
func oldAddressGone(link []Event, start time.Time, changeAt time.Duration) time.Duration {
	disrupt := changeAt
	for _, e := range link {
		if strings.HasPrefix(e.What, "old client address removed") {
			if d := e.At.Sub(start); d > disrupt {
				disrupt = d
			}
			break
		}
	}
	return disrupt
}

// noticed sets when each end first noticed the change: the client when
// a round trip's timeout fired or its connections ended, the server when
// its connections ended or a channel failed (unless it was cancelled).
func (rec *Record) noticed(cl *spicelike.ClientResult, client []Event, sres roleResult, changeTime time.Time) {
	for _, o := range cl.TimeoutOffsets {
		d := o + cl.Timeout - rec.ChangeAt
		rec.ClientNoticed = earliest(rec.ClientNoticed, d)
	}
	for _, e := range client {
		if strings.HasPrefix(e.What, "connections ended: ") && strings.TrimPrefix(e.What, "connections ended: ") != "" {
			rec.ClientNoticed = earliest(rec.ClientNoticed, e.At.Sub(changeTime))
		}
	}
	for _, e := range sres.Events {
		if strings.HasPrefix(e.What, "connections ended: ") && strings.TrimPrefix(e.What, "connections ended: ") != "" {
			rec.ServerNoticed = earliest(rec.ServerNoticed, e.At.Sub(changeTime))
		}
		if strings.HasPrefix(e.What, "channel error") && !(sres.Server != nil && sres.Server.Cancelled) {
			rec.ServerNoticed = earliest(rec.ServerNoticed, e.At.Sub(changeTime))
		}
	}
}

// channelErrors sets each end's channel errors, or the role's own error when it
// reported none.
func (rec *Record) channelErrors(cl *spicelike.ClientResult, cres, sres roleResult) {
	for _, e := range cl.Errors {
		rec.ClientErrors = append(rec.ClientErrors, e.Error())
	}
	if s := sres.Server; s != nil {
		for _, e := range s.Errors {
			rec.ServerErrors = append(rec.ServerErrors, e.Error())
		}
	}
	if cres.Err != "" && len(rec.ClientErrors) == 0 {
		rec.ClientErrors = append(rec.ClientErrors, cres.Err)
	}
	if sres.Err != "" && len(rec.ServerErrors) == 0 {
		rec.ServerErrors = append(rec.ServerErrors, sres.Err)
	}
}

// tcpEnds tells, for each tcp-arm connection of either end, what its
// kernel did after the change (tcpStory).
func tcpEnds(client, server *transport.State, changeTime time.Time) []string {
	var out []string
	for _, side := range []struct {
		name string
		st   *transport.State
	}{{"client", client}, {"server", server}} {
		if side.st == nil {
			continue
		}
		for _, c := range side.st.TCP {
			out = append(out, fmt.Sprintf("%s channel %d %s->%s: %s", side.name, c.Channel, c.LocalAddr, c.RemoteAddr,
				tcpStory(c, side.st.Started, changeTime)))
		}
	}
	return out
}

// tcpStory tells, from one connection's TCP_INFO series, what its kernel
// did after the change: when it last saw progress, when its
// retransmission timer first fired (CA_Loss), how often it retransmitted,
// and the state it was left in.
func tcpStory(c transport.TCPConnState, started, change time.Time) string {
	rel := func(at time.Duration) string {
		return fmt.Sprintf("%+.2fs", started.Add(at).Sub(change).Seconds())
	}
	lastProgress, firstRTO := "never", "never"
	var acked, retransBefore uint64
	var seenRTO bool
	for _, x := range c.Series {
		if x.BytesAcked != acked {
			acked = x.BytesAcked
			lastProgress = rel(x.At)
		}
		after := started.Add(x.At).After(change)
		if !after {
			retransBefore = uint64(x.Retransmits)
		}
		if after && !seenRTO && x.CAState == tcpCALoss {
			seenRTO = true
			firstRTO = rel(x.At)
		}
	}
	last := c.Info
	if len(c.Series) > 0 && c.InfoError != "" {
		last = c.Series[len(c.Series)-1]
	}
	return fmt.Sprintf("state %s, last ack progress %s, first RTO after the change %s, %d retransmissions after the change, %d unacked at the end",
		tcpState(last.State), lastProgress, firstRTO, uint64(last.Retransmits)-min(retransBefore, uint64(last.Retransmits)), last.Unacked)
}

// tcpCALoss is TCP_CA_Loss: the retransmission timer has fired.
const tcpCALoss = 4

func tcpState(s uint8) string {
	switch s {
	case 1:
		return "ESTABLISHED"
	case 7:
		return "CLOSE"
	case 0:
		return "unknown"
	}
	return fmt.Sprintf("%d", s)
}

func earliest(cur *time.Duration, d time.Duration) *time.Duration {
	if cur == nil || d < *cur {
		return &d
	}
	return cur
}

// allOn reports whether every address in the space-separated list is on
// host.
func allOn(addrs, host string) bool {
	f := strings.Fields(addrs)
	if len(f) == 0 {
		return false
	}
	for _, a := range f {
		if !strings.HasPrefix(a, host+":") {
			return false
		}
	}
	return true
}

func survived(r Record) (bool, string) {
	switch {
	case !r.ChangeSeen:
		return false, "the change never happened (the run ended first)"
	case r.Timeouts > 0:
		return false, "an interactive round trip timed out"
	case len(r.ClientErrors) > 0 || len(r.ServerErrors) > 0:
		return false, "channels failed"
	case r.Stall.Open:
		return false, "no round trip sent after the old address went completed"
	}
	return true, "every channel closed cleanly and round trips continued after the change"
}
