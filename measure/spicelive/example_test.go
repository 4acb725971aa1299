package spicelive_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/summary"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
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

// Validate reports every setting Run would refuse, each error naming the
// spicelive command's flag of the same name.
func ExampleConfig_Validate() {
	c := spicelive.Config{Repeats: 0, Duration: 5 * time.Second, Warmup: 10 * time.Second, CC: "reno",
		KeyInterval: 500 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 2 * time.Second, Reference: "1:100",
		Workdir: "results/spicelive", SessionTimeout: time.Minute}
	if err := c.SetLists("80:10", "0", "tcp", "synthetic"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Validate())
	// Output:
	// -repeats 0: want 1 to 1000 (a verdict needs 2)
	// -duration 5s, -warmup 10s: want 0 <= warm-up < duration
}

// A short live matrix, then its summary. It needs root and the programs
// MissingPrograms names, so it is not run here.
func ExampleRun() {
	spicelive.MaybeRunRole() // first thing in main: Run starts this binary again as its roles
	if miss := xsession.MissingPrograms(); miss != "" {
		fmt.Println(miss)
		return
	}
	if err := spicelive.Prepare(); err != nil {
		fmt.Println(err)
		return
	}
	c := spicelive.Config{Profiles: []string{"80:10:1"}, Arms: []measure.Arm{measure.TCP, measure.QUIC},
		Readings: []string{spicelive.ReadingLive}, Repeats: 2, Duration: 30 * time.Second, Warmup: 5 * time.Second, CC: "reno",
		KeyInterval: 500 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 2 * time.Second, Reference: "1:100",
		Workdir: "results/spicelive-example", SessionTimeout: time.Minute}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := spicelive.Run(context.Background(), c, os.Stderr, log); err != nil {
		fmt.Println(err)
	}
	if err := summary.Summarise(os.Stdout, c); err != nil {
		fmt.Println(err)
	}
}

// A display workload as the command's flags give it: the window, the
// frame rate, how long a key may take to be drawn, and when a run's
// display filled the link.
func ExampleConfig_SetDisplayFlags() {
	c := spicelive.Config{Duration: spicelive.DefaultDisplayDuration}
	given := func(name string) bool { return name == "frame-rate" }
	if err := c.SetDisplayFlags("video", "", 25, 0, spicelive.DefaultKeyTimeout, given); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Display, c.DisplayWidth, c.DisplayHeight, c.FrameRate, c.KeyTimeout)
	fmt.Println(spicelive.Saturated(7.4, 10), spicelive.Saturated(1.5, 10))
	// Output:
	// video 520 560 25 20s
	// true false
}
