package calibrate

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// The GSOLoss flood's datagrams: gsoPayload bytes each, the first four
// its sequence number (big-endian), the rest zero; gsoFrame is one on
// the wire with its UDP, IPv4 and Ethernet headers. gsoMaxBatch is the
// most written at once with UDP_SEGMENT.
const (
	gsoPayload  = 1400
	gsoFrame    = gsoPayload + 8 + 20 + 14
	gsoMaxBatch = 32
)

// gsoPlan is how the GSOLoss sender sends: batch datagrams per write,
// writes of them gap apart, total datagrams in all.
type gsoPlan struct {
	batch, writes, total int
	gap                  time.Duration
}

// planGSO paces datagrams to pacePct of rateMbit (counting their frames
// on the wire) for d, in writes of up to gsoMaxBatch datagrams, fewer
// where the link's packet limit is small. A write's datagrams reach the
// link at once, and a late sender may write twice in a row (gsoSend), so
// a fifth of the limit per write keeps two writes, and the one before
// them still in the delay line, well inside the limit.
func planGSO(rateMbit, pacePct float64, limit int, d time.Duration) (gsoPlan, error) {
	pps := pacePct / 100 * rateMbit * 1e6 / (gsoFrame * 8)
	p := gsoPlan{batch: min(gsoMaxBatch, max(1, limit/5))}
	p.writes = int(pps * d.Seconds() / float64(p.batch))
	if p.writes < 1 {
		return gsoPlan{}, fmt.Errorf("-gsoloss: %g%% of %g Mbit/s for %v is not one write of %d datagrams; give a higher rate or a longer -gsoloss-time", pacePct, rateMbit, d, p.batch)
	}
	p.total = p.writes * p.batch
	p.gap = time.Duration(float64(p.batch) / pps * 1e9)
	return p, nil
}

// gsoRecord is what the GSOLoss receiver saw: which datagrams arrived,
// how many reads held more than one, and how many datagrams were of the
// wrong length or carried a number never sent.
type gsoRecord struct {
	seen      []bool
	coalesced int
	malformed int
}

// take counts one read of payload: a UDP_GRO read holds datagrams of
// segSize bytes back to back (the last may be shorter); segSize 0 (no
// UDP_GRO control message) is one datagram.
func (r *gsoRecord) take(payload []byte, segSize int) {
	if segSize <= 0 || segSize >= len(payload) {
		r.one(payload)
		return
	}
	r.coalesced++
	for len(payload) > 0 {
		n := min(segSize, len(payload))
		r.one(payload[:n])
		payload = payload[n:]
	}
}

// one counts one datagram.
func (r *gsoRecord) one(d []byte) {
	if len(d) != gsoPayload {
		r.malformed++
		return
	}
	i := binary.BigEndian.Uint32(d)
	if uint64(i) >= uint64(len(r.seen)) {
		r.malformed++
		return
	}
	r.seen[i] = true
}

// judge fills g's loss figures from rec over the g.Sent datagrams sent
// (the interval widened by g.Inflation), and says why the figure cannot be judged when anything but the
// configured loss may have dropped datagrams.
func (g *GSOLoss) judge(rec gsoRecord) {
	lost, bursts := lossRuns(rec.seen[:g.Sent])
	g.Lost = lost
	g.Coalesced, g.Malformed = rec.coalesced, rec.malformed
	if bursts > 0 {
		g.MeanBurst = float64(lost) / float64(bursts)
	}
	if g.Sent > 0 {
		lo, hi := wilsonEffective(g.Lost, g.Sent, max(1, g.Inflation))
		g.LossPct, g.LossLoPct, g.LossHiPct = 100*float64(g.Lost)/float64(g.Sent), 100*lo, 100*hi
		g.Inside = g.LossWantPct >= g.LossLoPct && g.LossWantPct <= g.LossHiPct
	}
	var why []string
	add := func(n uint64, what string) {
		if n > 0 {
			why = append(why, fmt.Sprintf("%d %s", n, what))
		}
	}
	if g.Shaper {
		add(g.LimitDrops, "dropped at the limit")
		add(g.SendErrors, "failed writes by the shaper")
		add(g.SocketDrops, "dropped before the shaper read them")
		add(g.OtherDrops, "oversize or unreadable at the shaper")
		if r := uint64(g.Sent); g.ShaperReceived < r {
			add(r-g.ShaperReceived, "never reached the shaper")
		}
	}
	add(g.RcvbufErrors, "dropped by the receiving socket (RcvbufErrors)")
	add(g.SndbufErrors, "dropped at the sender (SndbufErrors)")
	add(uint64(g.Malformed), "malformed")
	if len(why) == 0 && g.Shaper && uint64(g.Lost) != g.ShaperLossDrops {
		why = append(why, fmt.Sprintf("the receiver missed %d, the shaper's configured loss took %d", g.Lost, g.ShaperLossDrops))
	}
	g.Unjudged = strings.Join(why, "; ")
}
