//go:build linux

package transport_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// Options.PacketSize sets the QUIC arms' datagram size, from MinPacketSize
// to MaxPacketSize; Listen and Dial refuse any other. Inside a
// testing/synctest bubble the size must be at most MaxVirtualPacketSize.
func ExampleOptions_packetSize() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cert, err := transport.NewCertificate()
	if err != nil {
		log.Fatal(err)
	}
	opts := transport.Options{Channels: 1, Certificate: cert}
	for _, size := range []int{transport.MinPacketSize - 1, transport.MaxPacketSize + 1} {
		opts.PacketSize = size
		_, err = transport.Listen(ctx, transport.ArmQUIC, "127.0.0.1:0", opts)
		fmt.Println(err)
	}

	opts.PacketSize = transport.MaxVirtualPacketSize
	ln, err := transport.Listen(ctx, transport.ArmQUIC, "127.0.0.1:0", opts)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if s, err := ln.Accept(ctx); err == nil {
			defer s.Close()
			<-ctx.Done()
		}
	}()
	opts.Certificate = cert.ClientOnly()
	s, err := transport.Dial(ctx, transport.ArmQUIC, ln.Addr().String(), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("datagram:", s.State().QUIC[0].ConfiguredPacketSize)
	// Output:
	// transport: Options.PacketSize is 1199: use 1200 to 1452 bytes (quic-go's bounds for a QUIC packet in a 1500-byte MTU), or 0 for 1400
	// transport: Options.PacketSize is 1453: use 1200 to 1452 bytes (quic-go's bounds for a QUIC packet in a 1500-byte MTU), or 0 for 1400
	// datagram: 1280
}

// A carrier secret is random and at least MinCarrierSecretLen bytes long;
// ListenCarrier and DialCarrier refuse a shorter one.
func ExampleOptions_carrierSecret() {
	ctx := context.Background()
	secret := make([]byte, transport.MinCarrierSecretLen)
	rand.Read(secret)

	_, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", transport.Options{CarrierSecret: secret[:8]})
	fmt.Println(err)
	ln, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", transport.Options{CarrierSecret: secret})
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	fmt.Println("listening with a", len(secret), "byte secret")
	// Output:
	// transport: Options.CarrierSecret is 8 bytes; give at least 16 (random), or none
	// listening with a 16 byte secret
}

// The controllers the tcp arm can pin with Options.CongestionControl on
// this host, and the one it runs when none is given.
func ExampleAvailableCongestionControl() {
	avail, err := transport.AvailableCongestionControl()
	if err != nil {
		log.Fatal(err)
	}
	host, err := transport.HostCongestionControl()
	if err != nil {
		log.Fatal(err)
	}
	// Every Linux kernel has reno, and the default is always loaded.
	fmt.Println("reno:", slices.Contains(avail, "reno"), "host default:", slices.Contains(avail, host))
	fmt.Println(transport.CheckCongestionControl("reno"))
	// Output:
	// reno: true host default: true
	// <nil>
}

// A client's QUIC connection moves to a new local address; a TCP
// session's connections cannot, and Migrate says so with ErrCannotMigrate.
func ExampleSession_Migrate() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cert, err := transport.NewCertificate()
	if err != nil {
		log.Fatal(err)
	}
	for _, arm := range []transport.Arm{transport.ArmQUIC, transport.ArmTCP} {
		opts := transport.Options{Channels: 2}
		if arm.IsQUIC() {
			opts.Certificate = cert
		}
		ln, err := transport.Listen(ctx, arm, "127.0.0.1:0", opts)
		if err != nil {
			log.Fatal(err)
		}
		defer ln.Close()
		go func() {
			if s, err := ln.Accept(ctx); err == nil {
				defer s.Close()
				<-ctx.Done()
			}
		}()
		opts.Certificate = cert.ClientOnly()
		s, err := transport.Dial(ctx, arm, ln.Addr().String(), opts)
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()

		res, err := s.Migrate(ctx, netip.MustParseAddr("127.0.0.2"))
		switch {
		case errors.Is(err, transport.ErrCannotMigrate):
			fmt.Println(arm, "stays:", err)
		case err != nil:
			log.Fatal(err)
		default:
			to, _ := netip.ParseAddrPort(res.Paths[0].To)
			fmt.Println(arm, "moved to", to.Addr())
		}
	}
	// Output:
	// quic moved to 127.0.0.2
	// tcp stays: transport: tcp client: migrate: transport: TCP cannot migrate
}
