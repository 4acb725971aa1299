package spicetunnel_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// What a tunnel end writes for a message it has followed: the parser's
// message becomes a trace record, timed from the trace's start.
func ExampleRecord() {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m := spiceproto.Msg{Dir: spiceproto.ServerToClient, Stage: spicetrace.StageData, Type: spiceproto.MsgDisplayDrawCopy,
		Name: "draw_copy", Size: 2188, Draw: &spiceproto.Draw{Primary: true, Box: spiceproto.Rect{Top: 12, Left: 6, Bottom: 25, Right: 12}}}
	rec := spicetunnel.Record(start, 1, spiceproto.ChannelDisplay, 0, true, m, start.Add(1523*time.Microsecond))

	var buf bytes.Buffer
	w, _ := spicetrace.NewWriter(&buf, spicetrace.Header{Side: spicetrace.SideClient, Started: start})
	w.Write(rec)
	w.Flush()
	fmt.Print(buf.String()[bytes.IndexByte(buf.Bytes(), '\n')+1:])
	// Output:
	// {"t_ns":1523000,"dir":"s2c","ch":1,"chtype":"display","stage":"data","type":304,"name":"draw_copy","size":2188,"draw":{"surface":0,"primary":true,"box":{"top":12,"left":6,"bottom":25,"right":12}}}
}

// The server end of a tunnel next to a spice-server on 127.0.0.1:5900,
// carrying channels over QUIC from port 4433 until interrupted. It needs
// a spice-server, so it is not run here.
func ExampleRunEnd() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	secret, err := twohost.ReadSecretFile("tunnel.secret") // mode 0600, at least 16 bytes
	if err != nil {
		fmt.Println(err)
		return
	}
	stats, err := spicetunnel.RunEnd(ctx, spicetunnel.EndConfig{Side: spicetrace.SideServer, Arm: transport.ArmQUIC,
		Listen: "198.18.0.1:4433", Spice: "127.0.0.1:5900", CertFile: "tunnel-cert.pem", KeyFile: "tunnel-key.pem",
		TraceFile: "server.jsonl", Options: transport.Options{CarrierSecret: secret}}, slog.Default())
	if err != nil {
		fmt.Println(err)
	}
	for _, ch := range stats {
		fmt.Println(ch.ChannelType, ch.BytesS2C, "bytes to the client")
	}
}
