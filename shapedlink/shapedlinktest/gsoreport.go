package shapedlinktest

import (
	"fmt"
	"strings"

	"github.com/shakenfist/quicbench/shapedlink"
)

// endCount is what one end's egress counters said about super-packets.
type endCount struct {
	end           shapedlink.End
	oversize, all uint64
}

// gsoReport says which ends sent super-packets, what that did on this
// backend and what to do about it; "" when no end sent one. The strict
// form is RequireNoGSO's, which has no choice to offer.
func gsoReport(backend shapedlink.Backend, ends []endCount, strict bool) string {
	var parts []string
	for _, e := range ends {
		if e.oversize > 0 {
			parts = append(parts, fmt.Sprintf("%d of the %d packets that left the %s end", e.oversize, e.all, e.end))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	var effect string
	switch backend {
	case shapedlink.BackendNetem:
		effect = "netem queued, delayed and lost each one as a single packet"
	case shapedlink.BackendEmulator:
		effect = "the emulator received each one already cut into wire packets, but all at once"
	default:
		effect = "nothing shaped them on this link, but a shaped one would have counted each as one packet"
	}
	msg := strings.Join(parts, " and ") + " were UDP GSO super-packets, longer than one wire packet: " +
		"a sender used segmentation offload (quic-go does by default on Linux), so the link did not carry the wire-sized " +
		"datagrams a network would (" + effect + "). To send wire-sized packets, give quic-go its UDP socket through " +
		"transport.WithoutGSO (github.com/shakenfist/quicbench/transport)."
	if strict {
		return "shapedlinktest.RequireNoGSO: " + msg
	}
	return "shapedlinktest: " + msg + " If the test means to send super-packets, ignore this line; " +
		"to make them fail the test, call shapedlinktest.RequireNoGSO."
}
