package calibrate

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// lossRun sends n datagrams from server to client and counts those
// delivered. The pace is half the link's byte rate and half what the
// packet limit allows (the limit counts the delay line, so at 80:10 and
// limit 110 more than 2750 packets/s would be dropped by the limit even
// though their bytes fit the rate).
func lossRun(ctx context.Context, l *shapedlink.Link, n int, rate float64, rtt time.Duration, limit int) (lossRecord, error) {
	return oneWay(ctx, l, n, lossGap(rate, rtt, limit), rtt)
}

// lossGap is the loss run's spacing: see lossRun.
func lossGap(rate float64, rtt time.Duration, limit int) time.Duration {
	perPkt := frameTime(echoFrame, rate)
	return max(2*perPkt, 2*(rtt/2+perPkt)/time.Duration(limit), 20*time.Microsecond)
}

// oneWay sends n datagrams from server to client, gap apart, and records
// which arrived, how many copies, and the one-way delay of the first.
func oneWay(ctx context.Context, l *shapedlink.Link, n int, gap, rtt time.Duration) (lossRecord, error) {
	srv, err := udpIn(l.Server(), ipOf(l.ServerAddr()))
	if err != nil {
		return lossRecord{}, err
	}
	defer srv.Close()
	cli, err := udpIn(l.Client(), ipOf(l.ClientAddr()))
	if err != nil {
		return lossRecord{}, err
	}
	defer cli.Close()
	_ = cli.SetReadBuffer(8 << 20)
	base := time.Now()
	got := make(chan lossRecord, 1)
	go func() {
		r := lossRecord{seen: make([]bool, n), copies: make([]int, n), oneWay: make([]time.Duration, n)}
		buf := make([]byte, 2048)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				got <- r
				return
			}
			if k != echoPayload || !zero(buf[12:k]) {
				r.changed++
				continue
			}
			if k >= 12 {
				if i := int(binary.BigEndian.Uint32(buf)); i < n {
					if !r.seen[i] {
						r.oneWay[i] = time.Since(base) - time.Duration(binary.BigEndian.Uint64(buf[4:]))
					}
					r.seen[i] = true
					r.copies[i]++
				} else {
					r.changed++
				}
			}
		}
	}()
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, echoPayload)
	next := time.Now()
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return lossRecord{}, ctx.Err()
		}
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		} else if wait < -time.Millisecond {
			// Stalled (a busy host): go on at the pace rather than send
			// the backlog in a burst the packet limit would drop.
			next = time.Now()
		}
		next = next.Add(gap)
		binary.BigEndian.PutUint32(msg, uint32(i))
		binary.BigEndian.PutUint64(msg[4:], uint64(time.Since(base)))
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			return lossRecord{}, err
		}
	}
	time.Sleep(rtt + 500*time.Millisecond)
	cli.Close()
	return <-got, nil
}

// zero reports whether every byte of b is zero.
func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// rxErrors reads the client namespace's counters of datagrams its IP and
// UDP checks dropped: Ip InHdrErrors (a bad header checksum counts there
// too) and Udp InErrors (a bad checksum or length).
func rxErrors(ns *shapedlink.Namespace) (uint64, error) {
	var n uint64
	err := ns.Do(func() error {
		// thread-self: /proc/self/net would show the namespace of the
		// process's main thread, not this one's.
		b, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		n = snmpCounter(string(b), "Ip:", "InHdrErrors") + snmpCounter(string(b), "Udp:", "InErrors")
		return nil
	})
	return n, err
}

// snmpCounter is counter name of the section (a line of names, then one
// of values) in a /proc/net/snmp text, or 0.
func snmpCounter(text, section, name string) uint64 {
	var names []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != section {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, k := range names {
			if k == name && i+1 < len(f) {
				v, _ := strconv.ParseUint(f[i+1], 10, 64)
				return v
			}
		}
	}
	return 0
}
