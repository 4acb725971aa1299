package simcheck

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// This file is the three probes, each run over one fresh link of any
// backend, in whatever time the caller runs in (real, or a synctest
// bubble's): a quic-go bulk transfer's goodput, an idle UDP echo's round
// trips, and which datagrams of a numbered stream the link lost.

// bulk moves data from a quic-go server to its client over link (the
// transport's quic arm, one channel) for c.Bulk and returns the goodput
// after the warm-up, in Mbit/s.
func bulk(ctx context.Context, link *shapedlink.Link, c Probes) (float64, error) {
	cert, err := transport.NewCertificate()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Bulk+time.Minute)
	defer cancel()
	so := transport.Options{Channels: 1, Certificate: cert, PacketSize: c.PacketSize, ListenPacket: link.Server().ListenPacket}
	ln, err := transport.Listen(ctx, transport.ArmQUIC, net.JoinHostPort(link.ServerAddr().String(), "0"), so)
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		ch := s.Channel(0)
		// A write blocked on flow control ends when the run does.
		stop := context.AfterFunc(ctx, func() { _ = ch.SetWriteDeadline(time.Now()) })
		defer func() { stop(); _ = s.Close() }()
		buf := make([]byte, 64<<10)
		for {
			if _, err := ch.Write(buf); err != nil {
				return
			}
		}
	}()
	// When bulk returns: the client's session closes (deferred below),
	// then the server's, then the listener.
	defer func() { cancel(); <-served }()
	co := so
	co.Certificate, co.ListenPacket = cert.ClientOnly(), link.Client().ListenPacket
	s, err := transport.Dial(ctx, transport.ArmQUIC, ln.Addr().String(), co)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	ch := s.Channel(0)
	_ = ch.SetReadDeadline(time.Now().Add(c.Bulk + 30*time.Second))
	buf := make([]byte, 64<<10)
	start := time.Now()
	var total, atWarm int64
	var warmAt time.Duration
	for {
		n, err := ch.Read(buf)
		if err != nil {
			return 0, fmt.Errorf("bulk read after %v: %w", time.Since(start), err)
		}
		total += int64(n)
		el := time.Since(start)
		if warmAt == 0 && el >= c.BulkWarmup {
			atWarm, warmAt = total, el
		}
		if el >= c.Bulk {
			return float64(total-atWarm) * 8 / (el - warmAt).Seconds() / 1e6, nil
		}
	}
}

// echo sends c.Echoes 64-byte datagrams from the client end, one every
// c.EchoGap once the last came back (or was given up after a second),
// to a socket at the server end that echoes them, and times each.
func echo(ctx context.Context, link *shapedlink.Link, c Probes) (Echo, error) {
	srv, err := link.Server().ListenPacket(ctx, "udp", net.JoinHostPort(link.ServerAddr().String(), "0"))
	if err != nil {
		return Echo{}, err
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := srv.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteTo(buf[:n], from)
		}
	}()
	cli, err := link.Client().ListenPacket(ctx, "udp", ":0")
	if err != nil {
		return Echo{}, err
	}
	defer cli.Close()
	r := Echo{Sent: c.Echoes}
	var rtts []time.Duration
	msg, buf := make([]byte, 64), make([]byte, 1500)
	for i := range c.Echoes {
		binary.BigEndian.PutUint32(msg, uint32(i))
		sent := time.Now()
		if _, err := cli.WriteTo(msg, srv.LocalAddr()); err != nil {
			return r, err
		}
		_ = cli.SetReadDeadline(sent.Add(time.Second))
		for {
			n, _, err := cli.ReadFrom(buf)
			if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
				r.Lost++
				break
			}
			if err != nil {
				return r, err
			}
			if n == len(msg) && binary.BigEndian.Uint32(buf) == uint32(i) {
				rtts = append(rtts, time.Since(sent))
				break
			}
		}
		time.Sleep(c.EchoGap)
	}
	if len(rtts) == 0 {
		return r, fmt.Errorf("all %d echoes were lost", c.Echoes)
	}
	r.P50, _ = stats.P50(rtts)
	r.P99, _ = stats.P99(rtts)
	return r, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lossPattern sends c.Datagrams numbered datagrams client to server, one
// every c.Spacing (sparse enough that the limit never binds, so only the
// loss draws decide), and returns which were lost, in order.
func lossPattern(ctx context.Context, link *shapedlink.Link, c Probes) ([]bool, error) {
	srv, err := link.Server().ListenPacket(ctx, "udp", net.JoinHostPort(link.ServerAddr().String(), "0"))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	got := make([]bool, c.Datagrams)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, _, err := srv.ReadFrom(buf)
			if err != nil {
				return
			}
			if k := binary.BigEndian.Uint32(buf); n >= 4 && int(k) < len(got) {
				got[k] = true
			}
		}
	}()
	cli, err := link.Client().ListenPacket(ctx, "udp", ":0")
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	msg := make([]byte, 100)
	start := time.Now()
	for i := range c.Datagrams {
		time.Sleep(time.Until(start.Add(time.Duration(i) * c.Spacing)))
		binary.BigEndian.PutUint32(msg, uint32(i))
		if _, err := cli.WriteTo(msg, srv.LocalAddr()); err != nil {
			return nil, err
		}
	}
	// Everything still in flight arrives within the round trip and any
	// jitter; wait well past it, then stop the reader.
	time.Sleep(2*link.Profile().RoundTrip() + time.Second)
	_ = srv.Close()
	<-done
	lost := make([]bool, len(got))
	for i, ok := range got {
		lost[i] = !ok
	}
	return lost, nil
}
