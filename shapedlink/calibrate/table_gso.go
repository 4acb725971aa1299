package calibrate

import (
	"fmt"
	"io"
)

// printGSOLoss is the UDP_SEGMENT loss measurement: how the flood was
// sent, the loss the receiver counted against the configured one (or why
// it is not judged), and the shaper's and the sockets' account of it.
func printGSOLoss(w io.Writer, g *GSOLoss) {
	if g == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "UDP_SEGMENT loss at %s (offload %s, %s): %d-byte datagrams, %d per write, paced to %g%% of the rate for %.1f s\n",
		g.Profile, modeOf(g.Offload), orDash(g.Backend), g.Payload, g.Batch, g.PacePct, g.Seconds)
	for _, a := range g.Applied {
		fmt.Fprintf(w, "  applied: %s\n", a)
	}
	if g.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", g.Error)
		if g.Sent == 0 {
			return
		}
	}
	verdict := mark(g.Inside)
	if g.Unjudged != "" {
		verdict = "unjudged: " + g.Unjudged
	}
	fmt.Fprintf(w, "  receiver: sent %d, lost %d in runs of %.2f on average (configured %.2f): %.3f%% [%.3f,%.3f], configured %.3g%%: %s\n", g.Sent, g.Lost, g.MeanBurst, g.BurstWant, g.LossPct, g.LossLoPct, g.LossHiPct, g.LossWantPct, verdict)
	gro := "off (refused: one datagram per read)"
	if g.GRO {
		gro = fmt.Sprintf("on, %d reads held more than one datagram", g.Coalesced)
	}
	fmt.Fprintf(w, "  receiver: UDP_GRO %s; %d malformed; UDP RcvbufErrors %d; the sender's SndbufErrors %d\n", gro, g.Malformed, g.RcvbufErrors, g.SndbufErrors)
	if g.Shaper {
		fmt.Fprintf(w, "  shaper, server->client: received %d, lost %d to the configured loss; limit %d, send errors %d, socket drops %d, oversize or unreadable %d; super-packets in %d, out %d\n",
			g.ShaperReceived, g.ShaperLossDrops, g.LimitDrops, g.SendErrors, g.SocketDrops, g.OtherDrops, g.SuperPacketsIn, g.SuperPacketsOut)
	} else {
		fmt.Fprintln(w, "  shaper: no counters (not the emulator)")
	}
}

// printQUICGSO is the quic-go transfer: its goodput against the rate,
// whether quic-go used GSO, and the shaper's per-datagram loss against
// the configured one.
func printQUICGSO(w io.Writer, q *QUICGSO) {
	if q == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "quic-go bulk transfer with its GSO at %s (offload %s, %s), goodput over %.1f s\n", q.Profile, modeOf(q.Offload), orDash(q.Backend), q.Seconds)
	for _, a := range q.Applied {
		fmt.Fprintf(w, "  applied: %s\n", a)
	}
	if q.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", q.Error)
		return
	}
	note := ""
	if q.LossWantPct > 0 {
		note = " (no target: over random loss quic-go's NewReno is limited by its congestion window, not by the link)"
	}
	fmt.Fprintf(w, "  goodput %.1f Mbit/s, %.1f%% of the rate%s; quic-go reports GSO %s\n", q.GoodputMbit, q.GoodputPct, note, map[bool]string{true: "in use", false: "not in use"}[q.GSO])
	if !q.Shaper {
		fmt.Fprintln(w, "  shaper: no counters (not the emulator)")
		return
	}
	fmt.Fprintf(w, "  shaper, server->client: lost %d of %d datagrams: %.3f%% [%.3f,%.3f], configured %.3g%%: %s; limit %d, socket drops %d, send errors %d; super-packets in %d, out %d\n",
		q.ShaperLossDrops, q.ShaperReceived, q.LossPct, q.LossLoPct, q.LossHiPct, q.LossWantPct, mark(q.Inside), q.LimitDrops, q.SocketDrops, q.SendErrors, q.SuperPacketsIn, q.SuperPacketsOut)
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
