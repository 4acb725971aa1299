package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
)

// TestNetemKeepWarnedOnce: a matrix whose links keep offloads on netem is
// warned about once, as it runs; on the emulator, or wire-sized, it is
// not.
func TestNetemKeepWarnedOnce(t *testing.T) {
	for _, c := range []struct {
		link results.Link
		want int
	}{
		{results.Link{Backend: "netem", Offload: "keep"}, 1},
		{results.Link{Backend: "emulator", Offload: "keep"}, 0},
		{results.Link{Backend: "netem"}, 0},
	} {
		var out bytes.Buffer
		p := newProgress(&out, 2, 0, time.Second)
		p.linkWarnings(c.link)
		p.linkWarnings(c.link)
		if got := strings.Count(out.String(), "warning: "+report.NetemKeepWarning); got != c.want {
			t.Errorf("%+v: warned %d times, want %d:\n%s", c.link, got, c.want, out.String())
		}
	}
}

// TestRunsFailedError: failed runs are counted, and the error is
// ErrRunsFailed.
func TestRunsFailedError(t *testing.T) {
	var err error = &runsFailedError{Failed: 2, Total: 12}
	if !errors.Is(err, ErrRunsFailed) || !strings.Contains(err.Error(), "2 of 12 runs failed") {
		t.Errorf("runsFailedError: %v", err)
	}
}
