package neighbours_test

import (
	"fmt"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure/neighbours"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// run is a measured run of arm in cell whose one cross flow carried mbit
// in every 100 ms bin beside a display of display Mbit/s.
func run(cell results.Cell, arm string, display, mbit float64) results.Run {
	start := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	bins := make([]int64, 130)
	for i := range bins {
		bins[i] = int64(mbit * 1e6 / 8 / 10)
	}
	return results.Run{Schema: results.SchemaVersion, Cell: cell, Arm: arm, Repeat: 1,
		Started: start, Finished: start.Add(13 * time.Second), SamplesStart: start,
		Duration: 12 * time.Second, Warmup: 3 * time.Second, ThroughputMbit: display,
		Link: results.Link{Cross: []shapedlink.CrossReport{{Dir: "down", Kind: "cubic", CC: "cubic",
			Started: start, BinMs: 100, Bins: bins, SentPackets: 1000, Retransmits: 10}}}}
}

func Example() {
	cell := results.Cell{Profile: "80:10,down.cross=1xcubic", RTTms: 80, RateMbit: 10, CC: "reno"}
	runs := []results.Run{run(cell, "tcp", 5, 5), run(cell, "quic", 6, 4)}
	t, err := neighbours.Build(runs)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := t.Arms[1]
	fmt.Printf("%s: cross %.1f Mbit/s, %.2f of tcp on reno's, Jain %.3f\n", a.Arm, a.CrossMbit, a.CrossRatio, a.Jain)
	if err := t.WriteCSV(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// quic: cross 4.0 Mbit/s, 0.80 of tcp on reno's, Jain 0.962
	// cell,arm,repeat,failed,unmeasured,window_from_utc,window_to_utc,session_mbit,session_retransmit_pct,cross_mbit,cross_retransmit_pct,jain,flow_dir,flow_kind,flow_index,flow_cc,flow_mbit,flow_retransmit_pct,flow_retransmits,flow_sent_packets,reference,arm_cross_ratio
	// 80ms-10mbit_loss0_reno_down.cross-1xcubic,tcp,1,,,2026-12-07T10:00:03.000Z,2026-12-07T10:00:12.000Z,5.0000,,5.0000,1.0000,1.0000,down,cubic,0,cubic,5.0000,1.0000,10,1000,80ms-10mbit_loss0_reno_down.cross-1xcubic,1.0000
	// 80ms-10mbit_loss0_reno_down.cross-1xcubic,quic,1,,,2026-12-07T10:00:03.000Z,2026-12-07T10:00:12.000Z,6.0000,,4.0000,1.0000,0.9615,down,cubic,0,cubic,4.0000,1.0000,10,1000,80ms-10mbit_loss0_reno_down.cross-1xcubic,0.8000
}
