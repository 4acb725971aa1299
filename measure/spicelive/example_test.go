package spicelive_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// A matrix of one link at two loss levels, two arms and two readings:
// the plan runs every arm and reading of a cell's repeat before the next
// repeat.
func ExampleConfig_Plan() {
	c := spicelive.Config{Repeats: 2, Duration: 30 * time.Second, Warmup: 5 * time.Second, CC: "reno",
		KeyInterval: 500 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 2 * time.Second, Reference: "1:100",
		Workdir: "results/spicelive", SessionTimeout: time.Minute}
	if err := c.SetLists("80:10", "0 1", "tcp quic", "live synthetic"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Profiles)
	for _, j := range c.Plan()[:5] {
		fmt.Println(j.Profile, j.Arm, j.Reading, j.Repeat)
	}
	// Output:
	// [80:10 80:10:1]
	// 80:10 tcp live 1
	// 80:10 tcp synthetic 1
	// 80:10 quic live 1
	// 80:10 quic synthetic 1
	// 80:10 tcp live 2
}

// Key-to-draw from a client-end trace: the busy area's draw right after
// the key is not the answer; the typing area's draw is.
func ExampleAnalyse() {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	typing := spicetrace.Rect{Top: 0, Left: 0, Bottom: 316, Right: 484}
	busy := spicetrace.Rect{Top: 400, Left: 0, Bottom: 534, Right: 484}
	key := spicetrace.Record{T: ms(1000), Dir: spicetrace.ClientToServer, ChannelType: "inputs", Key: &spicetrace.Key{Code: 30, Down: true}}
	draw := func(t time.Duration, box spicetrace.Rect) spicetrace.Record {
		return spicetrace.Record{T: t, Dir: spicetrace.ServerToClient, ChannelType: "display", Draw: &spicetrace.Draw{Primary: true, Box: box}}
	}
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key,
		draw(ms(1004), spicetrace.Rect{Top: 500, Bottom: 513, Right: 300}), // a busy line
		draw(ms(1082), spicetrace.Rect{Top: 3, Left: 9, Bottom: 16, Right: 15}),
	}}
	a := spicelive.Analyse(tr, typing, busy, ms(1000))
	fmt.Println("key-to-draw", a.Samples[0].RTT, "; counting every draw would say", a.AllDrawsMin)
	// Output:
	// key-to-draw 82ms ; counting every draw would say 4ms
}

// A short live matrix, then its summary. It needs root and the programs
// MissingPrograms names, so it is not run here.
func ExampleRun() {
	spicelive.MaybeRunRole() // first thing in main: Run starts this binary again as its roles
	if miss := spicelive.MissingPrograms(); miss != "" {
		fmt.Println(miss)
		return
	}
	if err := spicelive.Prepare(); err != nil {
		fmt.Println(err)
		return
	}
	c := spicelive.Config{Profiles: []string{"80:10:1"}, Arms: []transport.Arm{transport.ArmTCP, transport.ArmQUIC},
		Readings: []string{spicelive.ReadingLive}, Repeats: 2, Duration: 30 * time.Second, Warmup: 5 * time.Second, CC: "reno",
		KeyInterval: 500 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 2 * time.Second, Reference: "1:100",
		Workdir: "results/spicelive-example", SessionTimeout: time.Minute}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := spicelive.Run(context.Background(), c, os.Stderr, log); err != nil {
		fmt.Println(err)
	}
	if err := spicelive.Summarise(os.Stdout, c); err != nil {
		fmt.Println(err)
	}
}

// A display workload with its defaults: the window, the frame rate, how
// long a key may take to be drawn, and when a run's display filled the
// link.
func ExampleConfig_SetDisplay() {
	c := spicelive.Config{Duration: spicelive.DefaultDisplayDuration}
	if err := c.SetDisplay("video"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Display, c.DisplayWidth, c.DisplayHeight, c.FrameRate, c.KeyTimeout)
	fmt.Println(spicelive.Saturated(7.4, 10), spicelive.Saturated(1.5, 10))
	// Output:
	// video 520 560 25 20s
	// true false
}
