//go:build linux

package transport_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// A loopback session of two TCP channels: the client sends one byte on each
// channel and the server echoes it back on the same channel.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := transport.Options{Channels: 2}

	ln, err := transport.Listen(ctx, transport.ArmTCP, "127.0.0.1:0", opts)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()

	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			log.Print(err)
			return
		}
		defer s.Close()
		for _, ch := range s.Channels() {
			b := make([]byte, 1)
			if _, err := io.ReadFull(ch, b); err != nil {
				log.Print(err)
				return
			}
			if _, err := ch.Write(b); err != nil {
				log.Print(err)
				return
			}
		}
		<-ctx.Done()
	}()

	s, err := transport.Dial(ctx, transport.ArmTCP, ln.Addr().String(), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for i, ch := range s.Channels() {
		if _, err := ch.Write([]byte{'a' + byte(i)}); err != nil {
			log.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(ch, b); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("channel %d echoed %q\n", i, b)
	}
	st := s.State()
	fmt.Println(st.Arm, st.Role, len(st.TCP), "connections, nodelay:", st.TCP[0].Options.NoDelay)
	// Output:
	// channel 0 echoed "a"
	// channel 1 echoed "b"
	// tcp client 2 connections, nodelay: true
}

// A QUIC session of three streams. The server's certificate is made once;
// in a real two-process run the client is given only cert.ClientOnly()
// (for example as a file holding CertPEM).
func Example_quic() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cert, err := transport.NewCertificate()
	if err != nil {
		log.Fatal(err)
	}
	serverOpts := transport.Options{Channels: 3, Certificate: cert}
	clientOpts := transport.Options{Channels: 3, Certificate: cert.ClientOnly()}

	ln, err := transport.Listen(ctx, transport.ArmQUIC, "127.0.0.1:0", serverOpts)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			log.Print(err)
			return
		}
		defer s.Close()
		// Echo channel 2 until the client's EOF, then end it too.
		_, _ = io.Copy(s.Channel(2), s.Channel(2))
		_ = s.Channel(2).CloseWrite()
		<-ctx.Done()
	}()

	s, err := transport.Dial(ctx, transport.ArmQUIC, ln.Addr().String(), clientOpts)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ch := s.Channel(2)
	if _, err := ch.Write([]byte("ping")); err != nil {
		log.Fatal(err)
	}
	if err := ch.CloseWrite(); err != nil {
		log.Fatal(err)
	}
	reply, err := io.ReadAll(ch)
	if err != nil {
		log.Fatal(err)
	}
	st := s.State()
	q := st.QUIC[0]
	fmt.Printf("%s on channel %d\n", reply, ch.Index())
	fmt.Println(st.CongestionControl)
	fmt.Println("ALPN:", q.ALPN, "GSO:", q.GSO, "datagram:", q.ConfiguredPacketSize)
	// Output:
	// ping on channel 2
	// newreno (quic-go, fixed)
	// ALPN: quicbench/1 GSO: false datagram: 1400
}

// A carrier opens channels one at a time, as a tunnel's clients connect,
// and the listener hands each over with its index.
func ExampleDialCarrier() {
	ctx := context.Background()
	// Only a client that holds the secret gets a channel.
	o := transport.Options{CarrierSecret: []byte("at least sixteen random bytes")}
	ln, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", o)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	c, err := transport.DialCarrier(ctx, transport.ArmTCP, ln.Addr().String(), o)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for _, first := range []string{"main", "display"} {
		ch, err := c.Open(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Fprint(ch, first)
		sc, err := ln.Accept(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		b := make([]byte, len(first))
		io.ReadFull(sc, b)
		fmt.Printf("channel %d: %s\n", sc.Index(), b)
	}
	// Output:
	// channel 0: main
	// channel 1: display
}
