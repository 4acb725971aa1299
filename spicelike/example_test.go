package spicelike_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
)

// A 300 ms run of the reference session over in-memory pipes. In real use
// the two ends run in separate processes over the channels a transport
// opened, and the run lasts Defaults().Duration.
func Example() {
	cfg := spicelike.Defaults()
	cfg.Duration = 300 * time.Millisecond
	cfg.Warmup = 100 * time.Millisecond

	// Any slice of io.ReadWriters: []net.Conn here, the transport
	// package's channels in real use.
	var client, server []net.Conn
	for range cfg.Channels {
		c, s := net.Pipe()
		defer c.Close()
		defer s.Close()
		client, server = append(client, c), append(server, s)
	}

	ctx := context.Background()
	srvDone := make(chan spicelike.ServerResult)
	go func() {
		res, err := spicelike.RunServer(ctx, cfg, server)
		if err != nil {
			fmt.Println("server:", err)
		}
		srvDone <- res
	}()
	res, err := spicelike.RunClient(ctx, cfg, client)
	if err != nil {
		fmt.Println("client:", err)
		return
	}
	for _, c := range client {
		c.Close() // the caller owns the channels
	}
	srv := <-srvDone

	fmt.Printf("server saw %d channels open and %d end\n", srv.Opened, srv.Ended)
	fmt.Println("timeouts:", res.Timeouts)
	fmt.Println("channel errors:", res.Err(), srv.Err())
	fmt.Println("samples after warm-up:", len(res.Measured()) > 0)
	fmt.Println("bulk bytes after warm-up:", res.BulkBytesWindow > 0)
	// Output:
	// server saw 5 channels open and 5 end
	// timeouts: 0
	// channel errors: <nil> <nil>
	// samples after warm-up: true
	// bulk bytes after warm-up: true
}

// Sessions with more quiet channels, or with roles moved around, are plain
// data.
func ExampleSessionChannels() {
	chans, err := spicelike.SessionChannels(5)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ch := range chans {
		fmt.Println(ch.Name, ch.Role)
	}
	// Output:
	// main quiet
	// display saturating
	// inputs interactive
	// cursor quiet
	// playback quiet
	// record quiet
	// smartcard quiet
}

// A shipped recording is a Replay: set it as Config.Replay, with its
// channels, and run the two ends over a transport's channels (as Example
// does, or with measure.Run over a link). It needs no X server.
func ExampleRecording() {
	fmt.Println(spicelike.Recordings())
	r, err := spicelike.Recording("video")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := spicelike.Defaults()
	cfg.Replay, cfg.Channels = r, r.ConfigChannels()
	fmt.Println("valid:", cfg.Validate())
	for _, ch := range cfg.Channels {
		fmt.Println(ch.Name, ch.Role)
	}
	fmt.Println("keys:", r.Keys > 0, "display over 10 Mbit/s:", r.ChannelMbit("display", true) > 10)

	_, err = spicelike.Recording("desktop")
	fmt.Println(err)
	// Output:
	// [images video]
	// valid: <nil>
	// main replayed
	// display replayed
	// inputs replayed
	// keys: true display over 10 Mbit/s: true
	// spicelike: no recording "desktop": the recordings are images, video
}

// A session of your own, recorded with examples/spicelive's -record, is a
// file WriteReplay wrote: ReadReplay reads it back, checked, to set as
// Config.Replay.
func ExampleReadReplay() {
	r, err := spicelike.Recording("images")
	if err != nil {
		fmt.Println(err)
		return
	}
	short, err := r.Trim(2 * time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	var file bytes.Buffer
	if err := spicelike.WriteReplay(&file, short); err != nil {
		fmt.Println(err)
		return
	}

	back, err := spicelike.ReadReplay(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := spicelike.Defaults()
	cfg.Replay, cfg.Channels = back, back.ConfigChannels()
	fmt.Println("span:", back.Span, "valid:", cfg.Validate())
	// Output:
	// span: 2s valid: <nil>
}
