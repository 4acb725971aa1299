package calibrate

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// probeLink builds a link of p with opts, probes its idle round trip and
// takes it down; expected is the round trip the probe should see.
func probeLink(ctx context.Context, c Config, p shapedlink.Profile, opts shapedlink.Options, expected time.Duration) *Probe {
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		return &Probe{Error: err.Error()}
	}
	defer l.Close()
	return probe(ctx, c, l, expected, 0)
}

// probe sends c.Echoes ICMP echoes across l, one every c.Interval, and
// summarises their round trips against expected.
func probe(ctx context.Context, c Config, l *shapedlink.Link, expected, rtt time.Duration) *Probe {
	pr := &Probe{IntervalMs: float64(c.Interval) / 1e6, ExpectedMs: float64(expected) / 1e6}
	rtts, sent, err := pings(ctx, l.Client(), l.ServerAddr(), c.Echoes, c.Interval, rtt)
	pr.Sent, pr.Answered = sent, len(rtts)
	if err != nil {
		pr.Error = err.Error()
	} else if len(rtts) == 0 {
		pr.Error = "no echo request was answered"
	}
	if len(rtts) > 0 {
		e := func(q float64) float64 { return float64(quantile(rtts, q)-expected) / 1e6 }
		pr.MinErrMs, pr.P50ErrMs, pr.P90ErrMs, pr.P99ErrMs, pr.MaxErrMs = e(0), e(0.5), e(0.9), e(0.99), e(1)
	}
	return pr
}

// udpIn opens a UDP socket inside ns.
func udpIn(ns *shapedlink.Namespace, ip net.IP) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := ns.Do(func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
		return err
	})
	return c, err
}

func ipOf(a interface{ AsSlice() []byte }) net.IP { return net.IP(a.AsSlice()) }

// echoes sends n stamped echoes from a socket on cliIP in cliNS to an echo
// server on srvIP in srvNS, one every 10 ms, and returns the round trips
// of those answered.
func echoes(ctx context.Context, cliNS, srvNS *shapedlink.Namespace, cliIP, srvIP net.IP, n int, rtt time.Duration) ([]time.Duration, int, error) {
	srv, err := udpIn(srvNS, srvIP)
	if err != nil {
		return nil, 0, err
	}
	defer srv.Close()
	cli, err := udpIn(cliNS, cliIP)
	if err != nil {
		return nil, 0, err
	}
	defer cli.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteToUDP(buf[:k], from)
		}
	}()
	base := time.Now()
	var mu sync.Mutex
	var rtts []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			now := time.Since(base)
			if err != nil {
				return
			}
			if k == echoPayload {
				sent := time.Duration(binary.LittleEndian.Uint64(buf))
				mu.Lock()
				rtts = append(rtts, now-sent)
				mu.Unlock()
			}
		}
	}()
	to := srv.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, echoPayload)
	sent := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			return nil, sent, ctx.Err()
		case <-tick.C:
		}
		binary.LittleEndian.PutUint64(msg, uint64(time.Since(base)))
		if _, err := cli.WriteToUDP(msg, to); err != nil {
			return nil, sent, err
		}
		sent++
	}
	time.Sleep(rtt + 500*time.Millisecond)
	cli.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return rtts, sent, nil
}
