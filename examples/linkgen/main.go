package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/shapedlink"
)

func main() {
	trace := flag.String("trace", "", "a trace generator (const:MBIT, cell:MBIT/CV[/SEED]) or trace file")
	sched := flag.String("schedule", "", "a schedule generator (blackout:DUR/EVERY[/hold], step:HI/LO/DUR/EVERY) or schedule file")
	summary := flag.Bool("summary", false, "print a summary instead of the trace or schedule itself")
	if err := cli.Parse(flag.CommandLine, os.Args[1:]); err != nil {
		os.Exit(cli.Exit(os.Stderr, "linkgen", err))
	}
	if (*trace == "") == (*sched == "") {
		os.Exit(cli.Exit(os.Stderr, "linkgen", errors.New("give exactly one of -trace or -schedule")))
	}
	if err := run(os.Stdout, *trace, *sched, *summary); err != nil {
		fmt.Fprintln(os.Stderr, "linkgen:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, trace, sched string, summary bool) error {
	if trace != "" {
		t, err := shapedlink.LoadTrace(trace)
		if err != nil {
			return err
		}
		if !summary {
			_, err := io.WriteString(w, t.Format())
			return err
		}
		fmt.Fprintf(w, "%s: %d opportunities, period %v, mean %.3f Mbit/s\n", t.Spec, len(t.Ms), t.Period(), t.MeanMbit())
		for s, r := range perSecond(t) {
			fmt.Fprintf(w, "%3d s %8.3f Mbit/s\n", s, r)
		}
		return nil
	}
	s, err := shapedlink.LoadSchedule(sched)
	if err != nil {
		return err
	}
	if summary {
		fmt.Fprintf(w, "%s: %d changes, period %v\n", s.Spec, len(s.Changes), s.Period)
		for _, c := range s.Changes {
			fmt.Fprintf(w, "%8v %-5s %s %g hold=%v\n", c.At, c.Dir, c.Set, c.Value, c.Hold)
		}
		return nil
	}
	return writeSchedule(w, s)
}

// perSecond is the trace's rate in each whole second of its period.
func perSecond(t shapedlink.Trace) []float64 {
	secs := int((t.Period() + time.Second - 1) / time.Second)
	out := make([]float64, secs)
	for _, ms := range t.Ms {
		if s := int(ms / 1000); s < secs {
			out[s] += shapedlink.TraceOpportunity * 8 / 1e6
		}
	}
	return out
}

// writeSchedule writes s as the JSON file LoadSchedule reads.
func writeSchedule(w io.Writer, s shapedlink.Schedule) error {
	type change struct {
		At    string  `json:"at"`
		Dir   string  `json:"dir,omitempty"`
		Set   string  `json:"set"`
		Value float64 `json:"value,omitempty"`
		Hold  bool    `json:"hold,omitempty"`
	}
	out := struct {
		Period  string   `json:"period,omitempty"`
		Changes []change `json:"changes"`
	}{}
	if s.Period > 0 {
		out.Period = s.Period.String()
	}
	for _, c := range s.Changes {
		out.Changes = append(out.Changes, change{At: c.At.String(), Dir: c.Dir, Set: c.Set, Value: c.Value, Hold: c.Hold})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
