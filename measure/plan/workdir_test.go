package plan

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
)

// TestWorkdirClaims: a work directory is refused while another command
// holds it (naming its pid), and when it was made for another matrix
// (naming what differs); neither refusal advises a rerun.
func TestWorkdirClaims(t *testing.T) {
	m := &Matrix{Profiles: testProfiles(t, "20:10"), Losses: []float64{1}, CCs: []string{MatchedCC},
		Arms: []measure.Arm{"tcp"}, Repeats: 1, Workdir: t.TempDir()}
	release, err := m.Claim()
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Claim()
	if !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Errorf("second claim while held: %v, want ErrWorkdir naming pid %d", err, os.Getpid())
	}
	release.Release()

	other := *m
	other.Repeats = 2
	other.Link.Backend = "emulator"
	other.Workload.Duration = time.Minute
	_, err = other.Claim()
	if !errors.Is(err, ErrWorkdir) {
		t.Fatalf("a different matrix: %v, want ErrWorkdir", err)
	}
	for _, want := range []string{"repeats: 1 there, 2 asked", `backend: "" there, "emulator" asked`, "workload.duration: 0 there, 60000000000 asked"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "run the same command again") {
		t.Errorf("refusal advises a rerun that cannot help: %v", err)
	}
	if !errors.Is(err, ErrWorkdir) {
		t.Errorf("a refused work directory: %v, want ErrWorkdir", err)
	}
	// The same matrix is welcome again.
	release, err = m.Claim()
	if err != nil {
		t.Fatalf("the same matrix refused: %v", err)
	}
	release.Release()
}
