package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
)

// FuzzSummariseRunRecord: summarise reads run.json files it did not write
// (edited by hand, truncated by a full disk, from another version), and on
// any bytes it either summarises them or returns an error: it never panics.
// The seed corpus is a real record, cut and bent a few ways.
func FuzzSummariseRunRecord(f *testing.F) {
	runs := reporttest.Seed()
	good, err := json.Marshal(runs[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`{"schema":1,"arm":"quic","repeat":1,"duration_ns":-1,"samples":[{"rtt":-5}]}`))
	f.Add([]byte(`{"schema":1,"arm":"tcp","repeat":1,"started":"2026-11-30T00:00:00Z","finished":"2026-11-30T00:01:00Z","duration_ns":45000000000,"warmup_ns":5000000000,"throughput_mbit":1e308,"sessions":[{"index":7}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		rd := results.RunDir(dir, runs[0].Cell, runs[0].Arm, runs[0].Repeat)
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rd, results.RunFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{dir}, {"-json", dir}} {
			_ = run(context.Background(), args, io.Discard, io.Discard)
		}
	})
}
